#include "tds/login7.h"

#include <optional>

#include "tds/text_encoding.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

// The fixed part of LOGIN7 up to cbSSPILong, as TDS 7.2+ clients send it.
constexpr std::size_t kFixedLength = 94;
constexpr std::uint8_t kIntegratedSecurity = 0x80;  // OptionFlags2 fIntSecurity
constexpr std::uint8_t kExtension = 0x10;           // OptionFlags3 fExtension
constexpr std::uint8_t kFeatureTerminator = 0xFF;

// The FeatureExt list at `offset`: (FeatureId, DWORD length, data) entries up to 0xFF.
std::optional<FederatedAuthentication> ReadFeatures(const WireReader& login,
                                                   std::string_view payload, std::size_t offset) {
  if (offset > payload.size()) login.Fail("FeatureExt lies beyond the message");
  WireReader features(payload.substr(offset), "LOGIN7 FeatureExt");
  std::optional<FederatedAuthentication> fed_auth;
  while (true) {
    const std::uint8_t id = features.U8();
    if (id == kFeatureTerminator) break;
    const std::uint32_t length = features.U32();
    const std::string_view data = features.Bytes(length);
    if (id != FederatedAuthentication::kFeatureId) continue;
    WireReader reader(data, "LOGIN7 FEDAUTH");
    FederatedAuthentication auth;
    // fFedAuthEcho is the lowest bit, bFedAuthLibrary the seven above it.
    const std::uint8_t options = reader.U8();
    auth.echo = (options & 0x01) != 0;
    auth.library = static_cast<std::uint8_t>(options >> 1);
    if (auth.library == FederatedAuthentication::kSecurityToken) {
      const std::uint32_t token_bytes = reader.U32();
      auth.token = Utf16ToUtf8(reader.Bytes(token_bytes));  // a nonce may follow
    }
    fed_auth = std::move(auth);
  }
  return fed_auth;
}

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
  const bool has_extension = (reader.U8() & kExtension) != 0;
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
  // With fExtension, ibExtension points to a DWORD holding the offset of the FeatureExt list.
  const std::size_t extension_offset = reader.U16();
  const std::size_t extension_length = reader.U16();
  login.library_name = field();
  login.language = field();
  login.database = field();
  if (has_extension && extension_length >= 4) {
    if (extension_offset + 4 > payload.size()) reader.Fail("ibExtension points beyond the message");
    WireReader pointer(payload.substr(extension_offset, 4), "LOGIN7");
    login.federated_authentication = ReadFeatures(reader, payload, pointer.U32());
  }
  return login;
}

}  // namespace mssql_cdc::tds
