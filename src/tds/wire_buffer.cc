#include "tds/wire_buffer.h"

#include "core/errors.h"
#include "tds/text_encoding.h"

namespace mssql_cdc::tds {

void WireReader::Need(std::size_t n) const {
  if (n > remaining()) {
    Fail("truncated: needs " + std::to_string(n) + " more bytes at offset " +
         std::to_string(pos_) + ", has " + std::to_string(remaining()));
  }
}

void WireReader::Fail(const std::string& why) const {
  throw SourceError(std::string("malformed TDS ") + what_ + " message: " + why);
}

std::uint8_t WireReader::PeekU8() const {
  Need(1);
  return static_cast<std::uint8_t>(bytes_[pos_]);
}

std::uint8_t WireReader::U8() {
  Need(1);
  return static_cast<std::uint8_t>(bytes_[pos_++]);
}

std::uint16_t WireReader::U16() {
  Need(2);
  auto p = reinterpret_cast<const std::uint8_t*>(bytes_.data() + pos_);
  pos_ += 2;
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

std::uint16_t WireReader::U16BigEndian() {
  Need(2);
  auto p = reinterpret_cast<const std::uint8_t*>(bytes_.data() + pos_);
  pos_ += 2;
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t WireReader::U32() {
  Need(4);
  auto p = reinterpret_cast<const std::uint8_t*>(bytes_.data() + pos_);
  pos_ += 4;
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::uint64_t WireReader::U64() {
  std::uint64_t low = U32();
  std::uint64_t high = U32();
  return low | (high << 32);
}

std::string_view WireReader::Bytes(std::size_t n) {
  Need(n);
  std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

std::string WireReader::BVarChar() {
  std::size_t chars = U8();
  return Utf16ToUtf8(Bytes(chars * 2));
}

std::string WireReader::UsVarChar() {
  std::size_t chars = U16();
  return Utf16ToUtf8(Bytes(chars * 2));
}

void WireBuffer::PutUtf16(std::string_view utf8) {
  const std::size_t room = 2 * utf8.size();
  const std::size_t written = EncodeUtf16(utf8, Extend(room));
  Truncate(size_ - room + written);
}

}  // namespace mssql_cdc::tds
