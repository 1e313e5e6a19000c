#include "tds/tokens.h"

#include <algorithm>

#include "core/errors.h"
#include "tds/packet.h"
#include "tds/text_encoding.h"

namespace mssql_cdc::tds {
namespace {

// B_VARCHAR: a 1-byte character count, then UCS-2. Longer text is cut at 255 characters.
void PutBVarChar(WireBuffer& out, std::string_view utf8) {
  std::size_t length_at = out.size();
  out.PutU8(0);
  std::size_t start = out.size();
  out.PutUtf16(utf8);
  std::size_t units = (out.size() - start) / 2;
  if (units > 255) {
    out.Truncate(start + 255 * 2);
    units = 255;
  }
  out.data()[length_at] = static_cast<std::uint8_t>(units);
}

// US_VARCHAR: a 2-byte character count, then UCS-2.
void PutUsVarChar(WireBuffer& out, std::string_view utf8) {
  std::size_t length_at = out.size();
  out.PutU16(0);
  std::size_t start = out.size();
  out.PutUtf16(utf8);
  std::size_t units = std::min<std::size_t>((out.size() - start) / 2, 0xFFFF);
  out.Truncate(start + units * 2);
  WireBuffer::Store16(out.data() + length_at, static_cast<std::uint16_t>(units));
}

void PutBVarByte(WireBuffer& out, std::string_view bytes) {
  out.PutU8(static_cast<std::uint8_t>(bytes.size()));
  out.PutBytes(bytes);
}

// Starts a token with a 2-byte length; returns where the length goes.
std::size_t BeginLengthToken(WireBuffer& out, std::uint8_t type) {
  out.PutU8(type);
  std::size_t at = out.size();
  out.PutU16(0);
  return at;
}

void EndLengthToken(WireBuffer& out, std::size_t length_at) {
  std::size_t length = out.size() - length_at - 2;
  if (length > 0xFFFF) throw InternalError("TDS token longer than 65535 bytes");
  WireBuffer::Store16(out.data() + length_at, static_cast<std::uint16_t>(length));
}

void WriteMessageToken(WireBuffer& out, std::uint8_t type, const MessageToken& m) {
  std::size_t at = BeginLengthToken(out, type);
  out.PutU32(static_cast<std::uint32_t>(m.number));
  out.PutU8(m.state);
  out.PutU8(m.severity);
  // The text is cut so the token's 2-byte length cannot overflow.
  std::string_view text = m.text;
  if (text.size() > 16000) text = text.substr(0, 16000);
  PutUsVarChar(out, text);
  PutBVarChar(out, m.server_name);
  PutBVarChar(out, m.procedure_name);
  out.PutU32(static_cast<std::uint32_t>(m.line));
  EndLengthToken(out, at);
}

}  // namespace

void WriteDone(WireBuffer& out, const DoneToken& done) {
  std::uint8_t* p = out.Extend(13);
  p[0] = done.type;
  WireBuffer::Store16(p + 1, done.status);
  WireBuffer::Store16(p + 3, done.current_command);
  WireBuffer::Store64(p + 5, done.row_count);
}

void WriteEnvChangeText(WireBuffer& out, EnvChange type, std::string_view new_value,
                        std::string_view old_value) {
  std::size_t at = BeginLengthToken(out, token::kEnvChange);
  out.PutU8(static_cast<std::uint8_t>(type));
  PutBVarChar(out, new_value);
  PutBVarChar(out, old_value);
  EndLengthToken(out, at);
}

void WriteEnvChangeBytes(WireBuffer& out, EnvChange type, std::string_view new_value,
                         std::string_view old_value) {
  std::size_t at = BeginLengthToken(out, token::kEnvChange);
  out.PutU8(static_cast<std::uint8_t>(type));
  PutBVarByte(out, new_value);
  PutBVarByte(out, old_value);
  EndLengthToken(out, at);
}

void WriteInfo(WireBuffer& out, const MessageToken& message) {
  WriteMessageToken(out, token::kInfo, message);
}

void WriteError(WireBuffer& out, const MessageToken& message) {
  WriteMessageToken(out, token::kError, message);
}

void WriteLoginAck(WireBuffer& out, std::uint32_t tds_version, std::string_view program_name,
                   std::uint8_t major, std::uint8_t minor, std::uint16_t build) {
  std::size_t at = BeginLengthToken(out, token::kLoginAck);
  out.PutU8(1);  // interface: SQL_TSQL
  // The TDS version is the one big-endian integer inside a token.
  out.PutU8(static_cast<std::uint8_t>(tds_version >> 24));
  out.PutU8(static_cast<std::uint8_t>(tds_version >> 16));
  out.PutU8(static_cast<std::uint8_t>(tds_version >> 8));
  out.PutU8(static_cast<std::uint8_t>(tds_version));
  PutBVarChar(out, program_name);
  out.PutU8(major);
  out.PutU8(minor);
  out.PutU8(static_cast<std::uint8_t>(build >> 8));
  out.PutU8(static_cast<std::uint8_t>(build));
  EndLengthToken(out, at);
}

void WriteFeatureExtAck(WireBuffer& out, std::uint8_t feature_id) {
  out.PutU8(token::kFeatureExtAck);
  out.PutU8(feature_id);
  out.PutU32(0);     // FeatureAckDataLen
  out.PutU8(0xFF);   // the list's terminator
}

void WriteReturnStatus(WireBuffer& out, std::int32_t status) {
  out.PutU8(token::kReturnStatus);
  out.PutU32(static_cast<std::uint32_t>(status));
}

void WriteReturnValueInt(WireBuffer& out, std::uint16_t ordinal, std::string_view name,
                         std::int32_t value) {
  out.PutU8(token::kReturnValue);
  out.PutU16(ordinal);
  PutBVarChar(out, name);
  out.PutU8(0x01);   // status: an OUTPUT parameter's value
  out.PutU32(0);     // user type
  out.PutU16(0x01);  // flags: nullable
  out.PutU8(0x26);   // INTN(4)
  out.PutU8(4);
  out.PutU8(4);
  out.PutU32(static_cast<std::uint32_t>(value));
}

}  // namespace mssql_cdc::tds
