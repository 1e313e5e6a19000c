#include "core/user_text.h"

#include <cstdint>

namespace mssql_cdc {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

void AppendHexByte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

// The length of the well-formed UTF-8 sequence starting at text[at] of two or more bytes, or
// 0 when the bytes there are not one (overlong forms, surrogates and values past U+10FFFF
// included).
std::size_t Utf8SequenceLength(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  std::uint32_t min = 0, code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min = 0x80, code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min = 0x800, code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

std::string QuoteUserText(std::string_view text, std::size_t max_chars) {
  std::string out = "'";
  std::size_t shown = 0;
  std::size_t at = 0;
  for (; at < text.size() && shown < max_chars; ++shown) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c >= 0x80) {
      if (const std::size_t n = Utf8SequenceLength(text, at)) {
        out.append(text.substr(at, n));
        at += n;
      } else {
        AppendHexByte(out, c);
        ++at;
      }
      continue;
    }
    ++at;
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          AppendHexByte(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "'";
  if (at < text.size()) {
    out.insert(out.size() - 1, "...");
    out += " (" + std::to_string(text.size()) + " bytes)";
  }
  return out;
}

}  // namespace mssql_cdc
