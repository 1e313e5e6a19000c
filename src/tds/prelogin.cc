#include "tds/prelogin.h"

#include <cstring>

#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::uint8_t kVersionOption = 0x00;
constexpr std::uint8_t kEncryptionOption = 0x01;
constexpr std::uint8_t kInstanceOption = 0x02;
constexpr std::uint8_t kThreadIdOption = 0x03;
constexpr std::uint8_t kMarsOption = 0x04;
constexpr std::uint8_t kTerminator = 0xFF;

}  // namespace

PreloginRequest ParsePrelogin(std::string_view payload) {
  PreloginRequest request;
  WireReader table(payload, "PRELOGIN");
  while (true) {
    const std::uint8_t option = table.U8();
    if (option == kTerminator) break;
    // Offsets and lengths are big-endian and count from the start of the payload.
    const std::size_t offset = table.U16BigEndian();
    const std::size_t length = table.U16BigEndian();
    if (offset + length > payload.size()) table.Fail("option data beyond the message");
    std::string_view data = payload.substr(offset, length);
    if (option == kVersionOption && length >= 6) {
      std::memcpy(request.version, data.data(), 6);
    } else if (option == kEncryptionOption && length >= 1) {
      request.encryption = static_cast<Encryption>(static_cast<std::uint8_t>(data[0]));
    } else if (option == kMarsOption && length >= 1) {
      request.mars = data[0] != 0;
    }
  }
  return request;
}

std::string BuildPreloginReply() {
  struct Option {
    std::uint8_t token;
    std::string_view data;
  };
  // SQL Server 2022's version, 16.0.1000.0: major, minor, build (big-endian), sub-build.
  static constexpr char kVersion[] = {0x10, 0x00, 0x03, static_cast<char>(0xE8), 0x00, 0x00};
  const char encryption = static_cast<char>(Encryption::kNotSupported);
  const Option options[] = {
      {kVersionOption, std::string_view(kVersion, 6)},
      {kEncryptionOption, std::string_view(&encryption, 1)},
      {kInstanceOption, std::string_view("\0", 1)},
      {kThreadIdOption, std::string_view()},
      {kMarsOption, std::string_view("\0", 1)},
  };
  constexpr std::size_t kCount = sizeof(options) / sizeof(options[0]);
  std::string out;
  std::size_t offset = kCount * 5 + 1;
  for (const Option& o : options) {
    out.push_back(static_cast<char>(o.token));
    out.push_back(static_cast<char>(offset >> 8));
    out.push_back(static_cast<char>(offset));
    out.push_back(static_cast<char>(o.data.size() >> 8));
    out.push_back(static_cast<char>(o.data.size()));
    offset += o.data.size();
  }
  out.push_back(static_cast<char>(kTerminator));
  for (const Option& o : options) out.append(o.data);
  return out;
}

std::string BuildPreloginRequest(Encryption encryption) {
  const char version[6] = {};
  std::string out;
  constexpr std::size_t kTable = 2 * 5 + 1;  // two options and the terminator
  auto option = [&](std::uint8_t token, std::size_t offset, std::size_t length) {
    out.push_back(static_cast<char>(token));
    out.push_back(static_cast<char>(offset >> 8));
    out.push_back(static_cast<char>(offset));
    out.push_back(static_cast<char>(length >> 8));
    out.push_back(static_cast<char>(length));
  };
  option(kVersionOption, kTable, 6);
  option(kEncryptionOption, kTable + 6, 1);
  out.push_back(static_cast<char>(kTerminator));
  out.append(version, 6);
  out.push_back(static_cast<char>(encryption));
  return out;
}

}  // namespace mssql_cdc::tds
