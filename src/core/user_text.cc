#include "core/user_text.h"
#include "core/utf8.h"

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
// 0 when the bytes there are not one (core/utf8.h).
std::size_t Utf8SequenceLength(std::string_view text, std::size_t at) {
  std::size_t end = at;
  return DecodeUtf8At(text, end) >= 0x80 ? end - at : 0;
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
