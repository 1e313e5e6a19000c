#include "source/odbc/utf16.h"

#include <cstring>

#include "core/utf8.h"

namespace mssql_cdc::odbc {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool IsHighSurrogate(char32_t u) { return u >= 0xD800 && u <= 0xDBFF; }
bool IsLowSurrogate(char32_t u) { return u >= 0xDC00 && u <= 0xDFFF; }

// Decodes the code point at text[i], advancing i; a malformed sequence gives one U+FFFD for
// its lead byte and the continuation bytes that follow it.
char32_t NextCodePoint(std::string_view text, std::size_t& i) {
  const long cp = DecodeUtf8At(text, i);
  if (cp >= 0) return static_cast<char32_t>(cp);
  const int extra = Utf8ContinuationBytes(static_cast<unsigned char>(text[i++]));
  for (int k = 0; k < extra && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; ++k) ++i;
  return kReplacement;
}

}  // namespace

Utf16String Utf8ToUtf16(std::string_view text) {
  Utf16String out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char32_t cp = NextCodePoint(text, i);
    if (cp >= 0x10000) {
      const char32_t v = cp - 0x10000;
      out.push_back(static_cast<Utf16Unit>(0xD800 + (v >> 10)));
      out.push_back(static_cast<Utf16Unit>(0xDC00 + (v & 0x3FF)));
    } else {
      out.push_back(static_cast<Utf16Unit>(cp));
    }
  }
  return out;
}

namespace {

// The conversion of `count` units read through `unit(i)`; `eight_bytes(i, out)` loads four
// units at i for the ASCII run (memcpy: the units may be unaligned bytes off the wire).
template <typename Unit>
std::size_t ConvertUtf16(const void* data, std::size_t count, char* out, Unit unit) {
  char* p = out;
  for (std::size_t i = 0; i < count; ++i) {
    // ASCII runs four units at a time: most text in most tables.
    while (i + 4 <= count) {
      std::uint64_t four;
      std::memcpy(&four, static_cast<const std::uint8_t*>(data) + 2 * i, sizeof four);
      if ((four & 0xFF80FF80FF80FF80ULL) != 0) break;
      p[0] = static_cast<char>(four);
      p[1] = static_cast<char>(four >> 16);
      p[2] = static_cast<char>(four >> 32);
      p[3] = static_cast<char>(four >> 48);
      p += 4;
      i += 4;
    }
    if (i == count) break;
    char32_t cp = unit(i);
    if (cp < 0x80) {
      *p++ = static_cast<char>(cp);
      continue;
    }
    if (IsHighSurrogate(cp) && i + 1 < count && IsLowSurrogate(unit(i + 1))) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (unit(i + 1) - 0xDC00);
      ++i;
    } else if (IsHighSurrogate(cp) || IsLowSurrogate(cp)) {
      cp = kReplacement;
    }
    if (cp < 0x800) {
      *p++ = static_cast<char>(0xC0 | (cp >> 6));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *p++ = static_cast<char>(0xE0 | (cp >> 12));
      *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *p++ = static_cast<char>(0xF0 | (cp >> 18));
      *p++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *p++ = static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace

std::size_t Utf16ToUtf8(const Utf16Unit* units, std::size_t count, char* out) {
  return ConvertUtf16(units, count, out, [units](std::size_t i) -> char32_t { return units[i]; });
}

std::size_t Utf16LeToUtf8(const std::uint8_t* bytes, std::size_t count, char* out) {
  return ConvertUtf16(bytes, count, out, [bytes](std::size_t i) -> char32_t {
    return static_cast<char32_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
  });
}


std::string Utf16ToUtf8(const Utf16Unit* units, std::size_t count) {
  std::string out(MaxUtf8Bytes(count), '\0');
  out.resize(Utf16ToUtf8(units, count, out.data()));
  return out;
}

}  // namespace mssql_cdc::odbc
