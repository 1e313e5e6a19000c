// UTF-8 decoding, the one rule every part of the engine reads text by: a code point is valid
// when it is encoded in the fewest bytes, is not a surrogate (U+D800-U+DFFF) and is at most
// U+10FFFF. Inline: the TDS server and the ODBC reader decode every string they carry.
#pragma once

#include <cstddef>
#include <string_view>

namespace mssql_cdc {

// The number of continuation bytes a lead byte announces (0 for ASCII), or -1 for a byte that
// cannot start a sequence.
inline int Utf8ContinuationBytes(unsigned char lead) {
  if (lead < 0x80) return 0;
  if ((lead & 0xE0) == 0xC0) return 1;
  if ((lead & 0xF0) == 0xE0) return 2;
  if ((lead & 0xF8) == 0xF0) return 3;
  return -1;
}

// The code point at text[i], with i moved past it; -1, with i unchanged, when the bytes there
// are not a valid sequence (cut short, overlong, a surrogate, past U+10FFFF).
inline long DecodeUtf8At(std::string_view text, std::size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char lead = p[i];
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  const int extra = Utf8ContinuationBytes(lead);
  if (extra < 0 || text.size() - i <= static_cast<std::size_t>(extra)) return -1;
  long cp = lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const unsigned char c = p[i + k];
    if ((c & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr long kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += static_cast<std::size_t>(extra) + 1;
  return cp;
}

}  // namespace mssql_cdc
