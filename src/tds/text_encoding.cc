#include "tds/text_encoding.h"

#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Code points of Windows-1252 bytes 0x80..0x9F; the five unassigned bytes map to the C1
// control of the same value, as Windows does.
constexpr char16_t kCp1252High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

// Decodes one UTF-8 sequence at s[i]; advances i. Returns -1 for an invalid sequence
// (overlong, surrogate, beyond U+10FFFF, truncated).
inline long DecodeUtf8(std::string_view s, std::size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  unsigned char c = p[i];
  if (c < 0x80) {
    ++i;
    return c;
  }
  int extra;
  long cp;
  long min;
  if ((c & 0xE0) == 0xC0) {
    extra = 1, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3, cp = c & 0x07, min = 0x10000;
  } else {
    return -1;
  }
  if (n - i <= static_cast<std::size_t>(extra)) return -1;
  for (int k = 1; k <= extra; ++k) {
    unsigned char cc = p[i + k];
    if ((cc & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += extra + 1;
  return cp;
}

inline void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

inline std::uint8_t* PutUnit(std::uint8_t* out, char16_t unit) {
  out[0] = static_cast<std::uint8_t>(unit);
  out[1] = static_cast<std::uint8_t>(unit >> 8);
  return out + 2;
}

inline std::uint8_t* PutCodePoint(std::uint8_t* out, char32_t cp) {
  if (cp < 0x10000) return PutUnit(out, static_cast<char16_t>(cp));
  cp -= 0x10000;
  out = PutUnit(out, static_cast<char16_t>(0xD800 + (cp >> 10)));
  return PutUnit(out, static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
}

}  // namespace

std::string Utf16ToUtf8(std::string_view utf16le) {
  std::string out;
  out.reserve(utf16le.size() / 2);
  const auto* p = reinterpret_cast<const unsigned char*>(utf16le.data());
  const std::size_t units = utf16le.size() / 2;
  for (std::size_t i = 0; i < units; ++i) {
    char32_t u = p[2 * i] | (p[2 * i + 1] << 8);
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < units) {
      char32_t low = p[2 * i + 2] | (p[2 * i + 3] << 8);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        AppendUtf8(out, 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
        ++i;
        continue;
      }
    }
    AppendUtf8(out, (u >= 0xD800 && u <= 0xDFFF) ? kReplacement : u);
  }
  return out;
}

std::ptrdiff_t Utf8ToUtf16(std::string_view utf8, std::uint8_t* out) {
  std::uint8_t* start = out;
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  std::size_t i = 0;
  const std::size_t n = utf8.size();
  while (i < n) {
    if (p[i] < 0x80) {
      out[0] = p[i];
      out[1] = 0;
      out += 2;
      ++i;
      continue;
    }
    long cp = DecodeUtf8(utf8, i);
    if (cp < 0) return -1;
    out = PutCodePoint(out, static_cast<char32_t>(cp));
  }
  return out - start;
}

void AppendUtf16(WireBuffer& buffer, std::string_view utf8) {
  std::size_t i = 0;
  while (i < utf8.size()) {
    long cp = DecodeUtf8(utf8, i);
    if (cp < 0) {
      ++i;
      cp = kReplacement;
    }
    std::uint8_t units[4];
    std::size_t bytes = PutCodePoint(units, static_cast<char32_t>(cp)) - units;
    buffer.PutBytes(units, bytes);
  }
}

std::size_t Utf16Length(std::string_view utf8) {
  std::size_t units = 0;
  std::size_t i = 0;
  while (i < utf8.size()) {
    long cp = DecodeUtf8(utf8, i);
    if (cp < 0) ++i;
    units += cp >= 0x10000 ? 2 : 1;
  }
  return units;
}

std::ptrdiff_t Utf8ToCp1252(std::string_view utf8, std::uint8_t* out) {
  std::uint8_t* start = out;
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  std::size_t i = 0;
  const std::size_t n = utf8.size();
  while (i < n) {
    if (p[i] < 0x80) {
      *out++ = p[i++];
      continue;
    }
    long cp = DecodeUtf8(utf8, i);
    if (cp < 0) return -1;
    if (cp >= 0xA0 && cp <= 0xFF) {
      *out++ = static_cast<std::uint8_t>(cp);
      continue;
    }
    std::uint8_t mapped = '?';
    for (int k = 0; k < 32; ++k) {
      if (kCp1252High[k] == cp) {
        mapped = static_cast<std::uint8_t>(0x80 + k);
        break;
      }
    }
    *out++ = mapped;
    // A supplementary character is two UTF-16 code units, and SQL Server converts each.
    if (cp >= 0x10000) *out++ = '?';
  }
  return out - start;
}

std::string Cp1252ToUtf8(std::string_view cp1252) {
  std::string out;
  out.reserve(cp1252.size());
  for (unsigned char c : cp1252) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0xA0) {
      AppendUtf8(out, kCp1252High[c - 0x80]);
    } else {
      AppendUtf8(out, c);
    }
  }
  return out;
}

}  // namespace mssql_cdc::tds
