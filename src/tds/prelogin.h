// PRELOGIN (MS-TDS 2.2.6.5): the first message of a connection, where client and server
// agree on encryption. This server never encrypts: it answers ENCRYPT_NOT_SUP, after which
// a client that offered or did not mind encryption logs in in plaintext, and one that
// requires it gives up (ClientRequiresEncryption tells the session to close).
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
};

// A PRELOGIN payload, a client's or a server's reply (they share the option table). Throws
// SourceError when the option table is malformed.
PreloginRequest ParsePrelogin(std::string_view payload);

// A client's PRELOGIN payload: VERSION (zeros), ENCRYPTION = `encryption`, the terminator.
// What a client sends to learn whether a server encrypts.
std::string BuildPreloginRequest(Encryption encryption);

// The reply's payload: VERSION, ENCRYPTION = ENCRYPT_NOT_SUP, INSTOPT, an empty THREADID and
// MARS off.
std::string BuildPreloginReply();

inline bool ClientRequiresEncryption(const PreloginRequest& request) {
  return request.encryption == Encryption::kOn || request.encryption == Encryption::kRequired;
}

}  // namespace mssql_cdc::tds
