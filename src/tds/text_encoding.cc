#include "tds/text_encoding.h"
#include "core/utf8.h"


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
    long cp = DecodeUtf8At(utf8, i);
    if (cp < 0) return -1;
    out = PutCodePoint(out, static_cast<char32_t>(cp));
  }
  return out - start;
}

std::size_t EncodeUtf16(std::string_view utf8, std::uint8_t* out) {
  std::uint8_t* const start = out;
  std::size_t i = 0;
  while (i < utf8.size()) {
    long cp = DecodeUtf8At(utf8, i);
    if (cp < 0) {
      ++i;
      cp = kReplacement;
    }
    out = PutCodePoint(out, static_cast<char32_t>(cp));
  }
  return static_cast<std::size_t>(out - start);
}

std::size_t Utf16Length(std::string_view utf8) {
  std::size_t units = 0;
  std::size_t i = 0;
  while (i < utf8.size()) {
    long cp = DecodeUtf8At(utf8, i);
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
    long cp = DecodeUtf8At(utf8, i);
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
