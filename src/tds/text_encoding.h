// Text conversions between the engine (UTF-8) and the wire: UCS-2/UTF-16LE for nchar,
// nvarchar, names and messages, Windows-1252 for char and varchar under the server's
// collation SQL_Latin1_General_CP1_CI_AS.
//
// The encoders write into memory the caller sized and report invalid UTF-8 by returning -1,
// so the per-value path of a result set neither allocates nor throws. Like SQL Server, a
// character Windows-1252 cannot hold becomes '?' (one per UTF-16 code unit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mssql_cdc::tds {


// UTF-16LE bytes to UTF-8; an unpaired surrogate becomes U+FFFD. An odd trailing byte is
// ignored.
std::string Utf16ToUtf8(std::string_view utf16le);

// Writes `utf8` as UTF-16LE into `out`, which must have room for 2 * utf8.size() bytes.
// Returns the bytes written, or -1 when `utf8` is not valid UTF-8.
std::ptrdiff_t Utf8ToUtf16(std::string_view utf8, std::uint8_t* out);

// Writes `utf8` as UTF-16LE at `out`, U+FFFD for each byte that is not valid UTF-8, and
// returns the bytes written: at most 2 * utf8.size(), the room `out` must have.
std::size_t EncodeUtf16(std::string_view utf8, std::uint8_t* out);

// The number of UTF-16 code units of `utf8` (invalid bytes count as one each).
std::size_t Utf16Length(std::string_view utf8);

// Writes `utf8` as Windows-1252 into `out`, which must have room for utf8.size() bytes.
// Returns the bytes written, or -1 when `utf8` is not valid UTF-8.
std::ptrdiff_t Utf8ToCp1252(std::string_view utf8, std::uint8_t* out);
// Windows-1252 bytes to UTF-8.
std::string Cp1252ToUtf8(std::string_view cp1252);

}  // namespace mssql_cdc::tds
