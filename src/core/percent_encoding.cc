#include "core/percent_encoding.h"

#include "core/ascii.h"

namespace mssql_cdc {
namespace {

// The byte the escape at text[i] ('%') stands for, or -1 when it is not one.
int EscapeAt(std::string_view text, std::size_t i) {
  if (i + 2 >= text.size()) return -1;
  const int high = HexDigitValue(text[i + 1]), low = HexDigitValue(text[i + 2]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

}  // namespace

std::string PercentEncode(std::string_view text, bool keep_slash) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~' || (c == '/' && keep_slash)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const int byte = EscapeAt(text, i);
    if (byte < 0) return std::nullopt;
    out += static_cast<char>(byte);
    i += 2;
  }
  return out;
}

std::string PercentDecodeLenient(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int byte = text[i] == '%' ? EscapeAt(text, i) : -1;
    if (byte < 0) {
      out += text[i];
    } else {
      out += static_cast<char>(byte);
      i += 2;
    }
  }
  return out;
}

}  // namespace mssql_cdc
