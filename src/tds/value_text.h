// Parsers of the text forms SQL Server prints and the sim storage keeps for values the wire
// carries in binary: exact decimals ("-12.3400"), dates, times, timestamps with an optional
// UTC offset, and uniqueidentifiers. They return false (or a failure kind) instead of
// throwing, and never allocate: they run once per value of a result set.
#pragma once

#include <cstdint>
#include <string_view>

namespace mssql_cdc::tds {

// Days from 0001-01-01 to the given proleptic Gregorian date; false when it does not exist
// or lies outside years 1..9999.
bool DaysFromCivil(int year, int month, int day, std::int32_t* days);

inline constexpr std::int64_t kTicksPerSecond = 10'000'000;  // 100 ns units
inline constexpr std::int64_t kTicksPerDay = 86'400 * kTicksPerSecond;

// "YYYY-MM-DD".
bool ParseDate(std::string_view text, std::int32_t* days);
// "HH:MM[:SS[.f{1,7}]]" to 100 ns ticks since midnight.
bool ParseTimeOfDay(std::string_view text, std::int64_t* ticks);

struct Timestamp {
  std::int32_t days = 0;   // since 0001-01-01
  std::int64_t ticks = 0;  // 100 ns since midnight
  bool has_offset = false;
  int offset_minutes = 0;  // local = UTC + offset
};
// "YYYY-MM-DD[( |T)HH:MM[:SS[.f{1,7}]]][ ]([+-]HH:MM|Z)": a date, a date and time, either
// with an offset.
bool ParseTimestamp(std::string_view text, Timestamp* out);

enum class DecimalParse { kOk, kMalformed, kTooManyDigits, kInexact };
// "-12.3400" as a sign and the magnitude scaled by 10^scale. kTooManyDigits when the integer
// part has more than precision - scale digits; kInexact when non-zero digits lie beyond
// `scale`.
DecimalParse ParseScaledDecimal(std::string_view text, int precision, int scale,
                                bool* negative, unsigned __int128* magnitude);

// "8-4-4-4-12" hex digits (either case, optionally in braces) into the 16 bytes of the wire,
// whose first three groups are little-endian.
bool ParseGuid(std::string_view text, std::uint8_t out[16]);

}  // namespace mssql_cdc::tds
