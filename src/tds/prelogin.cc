#include "tds/prelogin.h"

#include <cstring>
#include <initializer_list>

#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::uint8_t kVersionOption = 0x00;
constexpr std::uint8_t kEncryptionOption = 0x01;
constexpr std::uint8_t kInstanceOption = 0x02;
constexpr std::uint8_t kThreadIdOption = 0x03;
constexpr std::uint8_t kMarsOption = 0x04;
constexpr std::uint8_t kFedAuthRequiredOption = 0x06;
constexpr std::uint8_t kTerminator = 0xFF;

struct Option {
  std::uint8_t token;
  std::string_view data;
};

// A PRELOGIN payload: the option table (token, big-endian offset and length of each option's
// data, counted from the payload's start), the terminator, then the options' data in order.
std::string OptionTable(std::initializer_list<Option> options) {
  std::string out;
  std::size_t offset = options.size() * 5 + 1;
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
    } else if (option == kFedAuthRequiredOption && length >= 1) {
      request.fed_auth_required = data[0] == 0x01;
    }
  }
  return request;
}

std::string BuildPreloginReply(Encryption reply, bool fed_auth_required) {
  // SQL Server 2022's version, 16.0.1000.0: major, minor, build (big-endian), sub-build.
  static constexpr char kVersion[] = {0x10, 0x00, 0x03, static_cast<char>(0xE8), 0x00, 0x00};
  const char encryption = static_cast<char>(reply);
  const Option version{kVersionOption, std::string_view(kVersion, 6)};
  const Option encrypt{kEncryptionOption, std::string_view(&encryption, 1)};
  const Option instance{kInstanceOption, std::string_view("\0", 1)};
  const Option thread{kThreadIdOption, std::string_view()};
  const Option mars{kMarsOption, std::string_view("\0", 1)};
  if (fed_auth_required) {
    return OptionTable({version, encrypt, instance, thread, mars,
                        {kFedAuthRequiredOption, std::string_view("\x01", 1)}});
  }
  return OptionTable({version, encrypt, instance, thread, mars});
}

EncryptionDecision DecideEncryption(Encryption client, EncryptionSetting server) {
  using Outcome = EncryptionDecision::Outcome;
  // A client's REQ is read as ON: both mean it will not go on without encryption.
  const bool client_requires = client == Encryption::kOn || client == Encryption::kRequired;
  switch (server) {
    case EncryptionSetting::kUnavailable:
      return {Encryption::kNotSupported, client_requires ? Outcome::kRefuse : Outcome::kPlaintext};
    case EncryptionSetting::kAvailable:
      if (client_requires) return {Encryption::kOn, Outcome::kEverything};
      if (client == Encryption::kOff) return {Encryption::kOff, Outcome::kLoginOnly};
      return {Encryption::kNotSupported, Outcome::kPlaintext};
    case EncryptionSetting::kForced:
      if (client_requires) return {Encryption::kOn, Outcome::kEverything};
      if (client == Encryption::kOff) return {Encryption::kRequired, Outcome::kEverything};
      return {Encryption::kRequired, Outcome::kRefuse};
  }
  return {};
}

std::string BuildPreloginRequest(Encryption encryption, bool fed_auth_required) {
  static constexpr char kVersion[6] = {};
  const char wanted = static_cast<char>(encryption);
  const Option version{kVersionOption, std::string_view(kVersion, 6)};
  const Option encrypt{kEncryptionOption, std::string_view(&wanted, 1)};
  if (fed_auth_required) {
    return OptionTable({version, encrypt, {kFedAuthRequiredOption, std::string_view("\x01", 1)}});
  }
  return OptionTable({version, encrypt});
}

}  // namespace mssql_cdc::tds
