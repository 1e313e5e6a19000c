#include "tds/login7.h"

#include "tds/text_encoding.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

// The fixed part of LOGIN7 up to cbSSPILong, as TDS 7.2+ clients send it.
constexpr std::size_t kFixedLength = 94;
constexpr std::uint8_t kIntegratedSecurity = 0x80;  // OptionFlags2 fIntSecurity

}  // namespace

std::string DecodePassword(std::string_view scrambled) {
  std::string utf16(scrambled);
  for (char& c : utf16) {
    auto b = static_cast<std::uint8_t>(static_cast<std::uint8_t>(c) ^ 0xA5);
    c = static_cast<char>(static_cast<std::uint8_t>((b << 4) | (b >> 4)));
  }
  return Utf16ToUtf8(utf16);
}

Login7Request ParseLogin7(std::string_view payload) {
  WireReader reader(payload, "LOGIN7");
  if (payload.size() < kFixedLength) reader.Fail("shorter than the fixed part");
  Login7Request login;
  reader.U32();  // total length
  login.tds_version = reader.U32();
  login.packet_size = reader.U32();
  reader.U32();  // client program version
  login.client_pid = reader.U32();
  reader.U32();  // connection id
  reader.U8();   // OptionFlags1
  login.integrated_security = (reader.U8() & kIntegratedSecurity) != 0;
  reader.U8();  // TypeFlags
  reader.U8();  // OptionFlags3
  reader.U32();  // client time zone
  reader.U32();  // client LCID

  // (offset, length in characters) pairs; offsets count from the start of LOGIN7.
  auto field = [&](bool scrambled = false) {
    const std::size_t offset = reader.U16();
    const std::size_t chars = reader.U16();
    if (offset + 2 * chars > payload.size()) reader.Fail("a field points beyond the message");
    std::string_view bytes = payload.substr(offset, 2 * chars);
    return scrambled ? DecodePassword(bytes) : Utf16ToUtf8(bytes);
  };
  login.host_name = field();
  login.user_name = field();
  login.password = field(/*scrambled=*/true);
  login.app_name = field();
  login.server_name = field();
  reader.U16(), reader.U16();  // extension (FeatureExt): nothing here needs it
  login.library_name = field();
  login.language = field();
  login.database = field();
  return login;
}

}  // namespace mssql_cdc::tds
