// LOGIN7 and PRELOGIN messages built the way FreeTDS 1.3 sends them, for tests that talk to
// the server or the parser without a driver.
#pragma once

#include <cstdint>
#include <string>

#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds::testing {

// How a client scrambles a password: swap each byte's nibbles, then XOR 0xA5.
inline std::string Scramble(const std::string& utf16) {
  std::string out = utf16;
  for (char& c : out) {
    auto b = static_cast<std::uint8_t>(c);
    c = static_cast<char>(static_cast<std::uint8_t>(((b << 4) | (b >> 4)) ^ 0xA5));
  }
  return out;
}

// A TDS 7.4 LOGIN7 payload; `password_utf16` is the password in UCS-2 before scrambling.
// `feature_ext`, when given, is the FeatureExt list (terminator included) ibExtension
// points to.
inline std::string BuildLogin(const std::string& user, const std::string& password_utf16,
                              const std::string& database, std::uint32_t packet_size,
                              std::uint32_t tds_version = 0x74000004,
                              const std::string& feature_ext = "") {
  const std::string host = Ucs2("buildhost"), app = Ucs2("test"), server = Ucs2("127.0.0.1"),
                    library = Ucs2("DB-Library"), language = Ucs2("us_english"),
                    user16 = Ucs2(user), db16 = Ucs2(database),
                    scrambled = Scramble(password_utf16);
  std::string fixed;
  fixed += Le32(0);  // length, patched below
  fixed += Le32(tds_version);
  fixed += Le32(packet_size);
  fixed += Le32(7) + Le32(1234) + Le32(0);
  fixed += Hex("E0 03 00 18");
  fixed += Le32(0) + Le32(0x409);
  std::string data;
  std::size_t offset = 94;
  auto field = [&](const std::string& bytes) {
    fixed += Le16(static_cast<std::uint16_t>(offset)) +
             Le16(static_cast<std::uint16_t>(bytes.size() / 2));
    data += bytes;
    offset += bytes.size();
  };
  field(host);
  field(user16);
  field(scrambled);
  field(app);
  field(server);
  // ibExtension points to a DWORD holding the FeatureExt list's offset, patched below.
  const std::size_t extension_at = offset;
  if (feature_ext.empty()) {
    field("");
  } else {
    fixed += Le16(static_cast<std::uint16_t>(offset)) + Le16(4);  // a byte count
    data += Le32(0);
    offset += 4;
  }
  field(library);
  field(language);
  field(db16);
  fixed += Hex("00 50 8B E2 B7 8F");
  fixed += Le16(static_cast<std::uint16_t>(offset)) + Le16(0);  // SSPI
  fixed += Le16(static_cast<std::uint16_t>(offset)) + Le16(0);  // attach db file
  fixed += Le16(static_cast<std::uint16_t>(offset)) + Le16(0);  // change password
  fixed += Le32(0);
  std::string login = fixed + data;
  if (!feature_ext.empty()) {
    login.replace(extension_at, 4, Le32(static_cast<std::uint32_t>(login.size())));
    login += feature_ext;
  }
  login.replace(0, 4, Le32(static_cast<std::uint32_t>(login.size())));
  return login;
}

// A FeatureExt list with one FEDAUTH feature carrying `token` as a SECURITYTOKEN (library
// 0x01), as Driver 18 sends an access token; `echo` is fFedAuthEcho.
inline std::string FedAuthFeature(const std::string& token, bool echo, std::uint8_t library = 0x01) {
  const std::string token16 = Ucs2(token);
  std::string data;
  data.push_back(static_cast<char>((library << 1) | (echo ? 1 : 0)));
  data += Le32(static_cast<std::uint32_t>(token16.size())) + token16;
  return Hex("0A 01 00 00 00 01") + "\x02" + Le32(static_cast<std::uint32_t>(data.size())) + data +
         Hex("FF");
}

// PRELOGIN with VERSION, ENCRYPTION = `encryption`, INSTOPT, THREADID and MARS off.
inline std::string BuildPrelogin(std::uint8_t encryption) {
  std::string payload = Hex(
      "00 00 1A 00 06 01 00 20 00 01 02 00 21 00 0C 03 00 2D 00 04 04 00 31 00 01 FF "
      "09 00 00 00 00 00");
  payload.push_back(static_cast<char>(encryption));
  payload += std::string("MSSQLServer\0", 12);
  payload += Hex("39 30 00 00 00");
  return payload;
}

}  // namespace mssql_cdc::tds::testing
