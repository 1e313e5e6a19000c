#include "core/time.h"

#include <chrono>
#include <cstdio>

namespace mssql_cdc {

// Howard Hinnant's public-domain civil calendar algorithms.
std::int64_t DaysFromCivil(int year, unsigned month, unsigned day) {
  year -= month <= 2;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(year - era * 400);
  const unsigned doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void CivilFromDays(std::int64_t days, int* year, unsigned* month, unsigned* day) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (*month <= 2));
}

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

namespace {

// Reads exactly `n` digits at `*pos`.
bool Digits(std::string_view s, std::size_t* pos, int n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, std::size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

std::string FormatDateTime(std::int64_t micros, int digits, char separator) {
  const std::int64_t days = FloorDiv(micros, kMicrosPerDay);
  std::int64_t in_day = micros - days * kMicrosPerDay;
  int y;
  unsigned mo, d;
  CivilFromDays(days, &y, &mo, &d);
  const int h = static_cast<int>(in_day / kMicrosPerHour);
  in_day %= kMicrosPerHour;
  const int mi = static_cast<int>(in_day / kMicrosPerMinute);
  in_day %= kMicrosPerMinute;
  const int s = static_cast<int>(in_day / kMicrosPerSecond);
  const int frac = static_cast<int>(in_day % kMicrosPerSecond);
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u%c%02d:%02d:%02d", y, mo, d, separator, h,
                        mi, s);
  std::string out(buf, n);
  if (digits > 0) {
    char fbuf[16];
    std::snprintf(fbuf, sizeof fbuf, "%06d0", frac);
    out += '.';
    out.append(fbuf, digits > 7 ? 7 : digits);
  }
  return out;
}

std::string FormatDate(std::int64_t days) {
  int y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", y, m, d);
  return std::string(buf, n);
}

std::string FormatIsoMillis(std::int64_t micros) { return FormatDateTime(micros, 3, 'T'); }

std::optional<std::int64_t> ParseDateTime(std::string_view s) {
  std::size_t pos = 0;
  int y, mo, d, h = 0, mi = 0, sec = 0;
  if (!Digits(s, &pos, 4, &y) || !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &mo) ||
      !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &d)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || static_cast<unsigned>(d) > DaysInMonth(y, mo)) {
    return std::nullopt;
  }
  std::int64_t frac_micros = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!Digits(s, &pos, 2, &h) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &mi)) {
      return std::nullopt;
    }
    if (pos < s.size()) {
      if (!Expect(s, &pos, ':') || !Digits(s, &pos, 2, &sec)) return std::nullopt;
      if (pos < s.size()) {
        if (!Expect(s, &pos, '.') || pos >= s.size()) return std::nullopt;
        int count = 0;
        while (pos < s.size()) {
          char c = s[pos];
          if (c < '0' || c > '9') return std::nullopt;
          if (count < 6) frac_micros = frac_micros * 10 + (c - '0');
          ++count;
          ++pos;
        }
        for (int i = count; i < 6; ++i) frac_micros *= 10;
      }
    }
    if (h > 23 || mi > 59 || sec > 59) return std::nullopt;
  }
  return DaysFromCivil(y, mo, d) * kMicrosPerDay + h * kMicrosPerHour + mi * kMicrosPerMinute +
         sec * kMicrosPerSecond + frac_micros;
}

std::int64_t ParseUtcMillis(std::string_view text) {
  if (text.empty() || text.back() != 'Z') return 0;
  return ParseDateTime(text.substr(0, text.size() - 1)).value_or(0) / 1000;
}

std::optional<std::int64_t> ParseDateDays(std::string_view text) {
  if (text.size() != 10) return std::nullopt;
  const auto micros = ParseDateTime(text);
  if (!micros) return std::nullopt;
  return *micros / kMicrosPerDay;
}

UtcMicros NowUtc() {
  using namespace std::chrono;
  return {duration_cast<microseconds>(system_clock::now().time_since_epoch()).count()};
}

}  // namespace mssql_cdc
