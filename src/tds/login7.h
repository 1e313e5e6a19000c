// LOGIN7 (MS-TDS 2.2.6.4): who logs in, with which password, into which database, and the
// packet size and TDS version the client asks for.
//
// The password arrives scrambled (each byte's nibbles swapped, then XOR 0xA5) and is
// decoded here; it is kept only in Login7Request::password and must never be logged or put
// into a message. So is the token of federated authentication (Entra ID), which a client
// sends instead of a user and password in the FEDAUTH feature extension.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {

// The FEDAUTH feature extension of a LOGIN7 (MS-TDS 2.2.6.4, FeatureId 0x02).
struct FederatedAuthentication {
  static constexpr std::uint8_t kFeatureId = 0x02;
  static constexpr std::uint8_t kSecurityToken = 0x01;  // the token travels in LOGIN7
  std::uint8_t library = 0;  // kSecurityToken, or 0x02 (MSAL: the server must send FEDAUTHINFO)
  bool echo = false;         // fFedAuthEcho: the server's PRELOGIN reply held FEDAUTHREQUIRED=1
  std::string token;         // kSecurityToken's token, as UTF-8: a secret
};

struct Login7Request {
  std::uint32_t tds_version = 0;  // e.g. 0x74000004 for TDS 7.4
  std::uint32_t packet_size = 0;  // 0: the server's default
  std::uint32_t client_pid = 0;
  bool integrated_security = false;  // SSPI, which this server does not offer
  std::string host_name;
  std::string user_name;
  std::string password;
  std::string app_name;
  std::string server_name;
  std::string library_name;
  std::string language;
  std::string database;
  std::optional<FederatedAuthentication> federated_authentication;
};

// Throws SourceError when the message is shorter than its fixed part or a field or feature
// points outside it. Features other than FEDAUTH are skipped.
Login7Request ParseLogin7(std::string_view payload);

// The UTF-8 text of a scrambled LOGIN7 password (UCS-2 on the wire).
std::string DecodePassword(std::string_view scrambled);

}  // namespace mssql_cdc::tds
