// PRELOGIN (MS-TDS 2.2.6.5): the first message of a connection, where client and server
// agree on encryption, by the table of MS-TDS 2.2.6.5 (DecideEncryption).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {

enum class Encryption : std::uint8_t {
  kOff = 0x00,           // encrypt the login only
  kOn = 0x01,            // encrypt everything
  kNotSupported = 0x02,  // encrypt nothing
  kRequired = 0x03,
};

struct PreloginRequest {
  std::uint8_t version[6] = {};  // the client library's version
  Encryption encryption = Encryption::kOff;
  bool mars = false;
  // FEDAUTHREQUIRED=1: the client will log in with a token of federated authentication (an
  // Entra ID access token) and wants the server to say that it accepts one.
  bool fed_auth_required = false;
};

// A PRELOGIN payload, a client's or a server's reply (they share the option table). Throws
// SourceError when the option table is malformed.
PreloginRequest ParsePrelogin(std::string_view payload);

// A client's PRELOGIN payload: VERSION (zeros), ENCRYPTION = `encryption`, FEDAUTHREQUIRED=1
// when `fed_auth_required` (the client will log in with an access token), the terminator.
std::string BuildPreloginRequest(Encryption encryption, bool fed_auth_required = false);

// The reply's payload: VERSION, ENCRYPTION = `encryption`, INSTOPT, an empty THREADID, MARS
// off and, when `fed_auth_required`, FEDAUTHREQUIRED=1 (the answer to a client that asked;
// its LOGIN7 then echoes it).
std::string BuildPreloginReply(Encryption encryption, bool fed_auth_required = false);

// How a server is set up, in SQL Server's terms.
enum class EncryptionSetting {
  kUnavailable,  // no certificate: ENCRYPT_NOT_SUP
  kAvailable,    // a certificate: encrypts what the client asks for, and the login at least
  kForced,       // a certificate and Force Encryption: encrypts every connection
};

struct EncryptionDecision {
  Encryption reply = Encryption::kNotSupported;  // the ENCRYPTION value of the reply
  enum class Outcome {
    kPlaintext,
    kLoginOnly,  // TLS for the LOGIN7 message, then plaintext
    kEverything,
    kRefuse,  // the reply goes out, then the connection closes: the two cannot agree
  } outcome = Outcome::kPlaintext;
};

EncryptionDecision DecideEncryption(Encryption client, EncryptionSetting server);

}  // namespace mssql_cdc::tds
