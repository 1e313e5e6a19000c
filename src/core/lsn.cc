#include "core/lsn.h"

#include <cstring>

#include "core/ascii.h"
#include "core/errors.h"

namespace mssql_cdc {
namespace {

std::string Quoted(std::string_view text) {
  constexpr std::size_t kShown = 40;
  std::string shown(text.substr(0, kShown));
  if (text.size() > kShown) shown += "...";
  return "'" + shown + "'";
}

// Parses `digits` (hex, at most 20) right-aligned into an LSN; nullopt on a bad digit.
std::optional<Lsn> FromHexDigits(std::string_view digits) {
  if (digits.empty() || digits.size() > 2 * Lsn::kSize) return std::nullopt;
  Lsn::Bytes bytes{};
  std::size_t nibble = 2 * Lsn::kSize - digits.size();
  for (char c : digits) {
    int v = HexDigitValue(c);
    if (v < 0) return std::nullopt;
    bytes[nibble / 2] |= static_cast<std::uint8_t>(nibble % 2 == 0 ? v << 4 : v);
    ++nibble;
  }
  return Lsn(bytes);
}

bool HasHexPrefix(std::string_view text) {
  return text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

}  // namespace

std::optional<Lsn> Lsn::TryParse(std::string_view text) {
  if (!HasHexPrefix(text) || text.size() != 2 + 2 * kSize) return std::nullopt;
  return FromHexDigits(text.substr(2));
}

Lsn Lsn::Parse(std::string_view text) {
  if (auto lsn = TryParse(text)) return *lsn;
  throw ConfigError("malformed LSN " + Quoted(text) +
                    ": an LSN is 0x followed by 20 hex digits, e.g. 0x0000002A000001000001");
}

Lsn Lsn::ParseLenient(std::string_view text) {
  std::string_view digits = HasHexPrefix(text) ? text.substr(2) : text;
  if (auto lsn = FromHexDigits(digits)) return *lsn;
  throw ConfigError("malformed LSN " + Quoted(text) +
                    ": give 1 to 20 hex digits, with or without 0x, e.g. 0x0000002A000001000001");
}

Lsn Lsn::FromBytes(const void* data, std::size_t size) {
  if (size != kSize) {
    throw SourceError("an LSN has 10 bytes, got " + std::to_string(size));
  }
  Bytes bytes;
  std::memcpy(bytes.data(), data, kSize);
  return Lsn(bytes);
}

Lsn Lsn::FromUint64(std::uint64_t value) {
  Bytes bytes{};
  for (int i = 0; i < 8; ++i) bytes[kSize - 1 - i] = static_cast<std::uint8_t>(value >> (8 * i));
  return Lsn(bytes);
}

std::string Lsn::ToString() const {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "0x";
  out.reserve(2 + 2 * kSize);
  for (std::uint8_t b : bytes_) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xF]);
  }
  return out;
}

bool Lsn::IsZero() const {
  for (std::uint8_t b : bytes_) {
    if (b != 0) return false;
  }
  return true;
}

Lsn Lsn::Increment() const {
  Bytes out = bytes_;
  for (std::size_t i = kSize; i-- > 0;) {
    if (++out[i] != 0) return Lsn(out);
  }
  throw ConfigError("cannot increment LSN " + ToString() + ": it is the largest LSN");
}

Lsn Lsn::Decrement() const {
  Bytes out = bytes_;
  for (std::size_t i = kSize; i-- > 0;) {
    if (out[i]-- != 0) return Lsn(out);
  }
  throw ConfigError("cannot decrement LSN " + ToString() + ": it is the zero LSN");
}

}  // namespace mssql_cdc
