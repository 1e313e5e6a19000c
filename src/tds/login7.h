// LOGIN7 (MS-TDS 2.2.6.4): who logs in, with which password, into which database, and the
// packet size and TDS version the client asks for.
//
// The password arrives scrambled (each byte's nibbles swapped, then XOR 0xA5) and is
// decoded here; it is kept only in Login7Request::password and must never be logged or put
// into a message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {

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
};

// Throws SourceError when the message is shorter than its fixed part or a field points
// outside it.
Login7Request ParseLogin7(std::string_view payload);

// The UTF-8 text of a scrambled LOGIN7 password (UCS-2 on the wire).
std::string DecodePassword(std::string_view scrambled);

}  // namespace mssql_cdc::tds
