// Instants and wall-clock times as microsecond counts, and their ISO-8601 text forms.
// A UTC instant and a local wall-clock reading are both "microseconds since 1970-01-01
// 00:00:00" of their own clock; the types keep them apart so a local time is never mistaken
// for UTC. Microseconds match Arrow's and Spark's timestamp unit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc {

struct UtcMicros {
  std::int64_t value = 0;
  friend auto operator<=>(const UtcMicros&, const UtcMicros&) = default;
};

struct LocalMicros {
  std::int64_t value = 0;
  friend auto operator<=>(const LocalMicros&, const LocalMicros&) = default;
};

inline constexpr std::int64_t kMicrosPerSecond = 1'000'000;
inline constexpr std::int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
inline constexpr std::int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
inline constexpr std::int64_t kMicrosPerDay = 24 * kMicrosPerHour;

// a / b rounded towards negative infinity (b != 0): the day of a time before the epoch.
std::int64_t FloorDiv(std::int64_t a, std::int64_t b);
bool IsLeapYear(int year);
// 28 to 31; month 1 to 12.
unsigned DaysInMonth(int year, unsigned month);

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
std::int64_t DaysFromCivil(int year, unsigned month, unsigned day);
void CivilFromDays(std::int64_t days, int* year, unsigned* month, unsigned* day);

// "YYYY-MM-DD" of a count of days since 1970-01-01.
std::string FormatDate(std::int64_t days);
// "YYYY-MM-DDTHH:MM:SS.mmm": the offset and facts format (exactly milliseconds, truncated).
std::string FormatIsoMillis(std::int64_t micros);
// "YYYY-MM-DD HH:MM:SS.ffffff" with `digits` fraction digits (0 to 7; 7 pads a zero).
std::string FormatDateTime(std::int64_t micros, int digits, char separator = ' ');

// Parses "YYYY-MM-DD[(T| )HH:MM[:SS[.fffffff]]]" into microseconds (digits past 6 truncated).
// Returns nullopt on anything else, including out-of-range fields.
std::optional<std::int64_t> ParseDateTime(std::string_view text);
// Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" (a UTC time as object stores list it) into milliseconds
// since the epoch; 0 when it does not read, as a time no file has.
std::int64_t ParseUtcMillis(std::string_view text);
// Parses exactly "YYYY-MM-DD" into days since 1970-01-01; nullopt on anything else.
std::optional<std::int64_t> ParseDateDays(std::string_view text);

UtcMicros NowUtc();
// Milliseconds since the epoch, as Delta logs write times.
inline std::int64_t NowUnixMillis() { return NowUtc().value / 1000; }

}  // namespace mssql_cdc
