// Text between the engine (UTF-8) and ODBC's wide API (UTF-16 code units in SQLWCHAR).
//
// Conversions never fail: an unpaired surrogate (nvarchar holds UCS-2, so SQL Server can
// return one) and a malformed UTF-8 sequence become U+FFFD. Appending forms write into
// memory the caller sized with the worst-case bounds given here, so a column of values is
// converted without an allocation per value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mssql_cdc::odbc {

using Utf16Unit = std::uint16_t;  // SQLWCHAR of unixODBC
using Utf16String = std::basic_string<Utf16Unit>;

Utf16String Utf8ToUtf16(std::string_view text);
std::string Utf16ToUtf8(const Utf16Unit* units, std::size_t count);

// The most UTF-8 bytes `count` UTF-16 units can become: 3 each (a surrogate pair, 2 units,
// becomes 4 bytes).
inline constexpr std::size_t MaxUtf8Bytes(std::size_t count) { return 3 * count; }

// Writes the UTF-8 form of `count` units at `out`, which has room for MaxUtf8Bytes(count);
// returns the bytes written. A high surrogate as the last unit is converted as unpaired:
// callers reading a value in pieces pass it on to the next piece instead (see
// Utf16PieceEnd).
std::size_t Utf16ToUtf8(const Utf16Unit* units, std::size_t count, char* out);
// The same for `count` units as UTF-16LE bytes at any alignment (values off the wire).
std::size_t Utf16LeToUtf8(const std::uint8_t* bytes, std::size_t count, char* out);

// The number of units of a piece to convert now: all of them, or one fewer when the piece
// ends with a high surrogate whose low half comes with the next piece.
inline std::size_t Utf16PieceEnd(const Utf16Unit* units, std::size_t count) {
  return count > 0 && units[count - 1] >= 0xD800 && units[count - 1] <= 0xDBFF ? count - 1
                                                                                 : count;
}

}  // namespace mssql_cdc::odbc
