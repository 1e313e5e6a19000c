#include "tds/value_text.h"
#include "core/time.h"

#include <array>

namespace mssql_cdc::tds {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// 10^n for n = 0..19, each within 64 bits.
constexpr auto kPow10Upto19 = [] {
  std::array<std::uint64_t, 20> powers{};
  powers[0] = 1;
  for (std::size_t n = 1; n < powers.size(); ++n) powers[n] = powers[n - 1] * 10;
  return powers;
}();

// Exactly `n` digits at text[pos]; advances pos.
bool Digits(std::string_view text, std::size_t& pos, int n, int* value) {
  if (pos + n > text.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = text[pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  pos += n;
  *value = v;
  return true;
}

bool Expect(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// Hex digit values; -1 for anything else.
constexpr auto kHexValue = [] {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (int c = '0'; c <= '9'; ++c) table[c] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) table[c] = static_cast<std::int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) table[c] = static_cast<std::int8_t>(c - 'A' + 10);
  return table;
}();

bool ParseDateAt(std::string_view text, std::size_t& pos, std::int32_t* days) {
  int y = 0, m = 0, d = 0;
  if (!Digits(text, pos, 4, &y) || !Expect(text, pos, '-') || !Digits(text, pos, 2, &m) ||
      !Expect(text, pos, '-') || !Digits(text, pos, 2, &d)) {
    return false;
  }
  return DaysFromCivil(y, m, d, days);
}

bool ParseTimeAt(std::string_view text, std::size_t& pos, std::int64_t* ticks) {
  int h = 0, mi = 0, s = 0;
  if (!Digits(text, pos, 2, &h) || !Expect(text, pos, ':') || !Digits(text, pos, 2, &mi)) {
    return false;
  }
  std::int64_t fraction = 0;
  if (pos < text.size() && text[pos] == ':') {
    ++pos;
    if (!Digits(text, pos, 2, &s)) return false;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      int digits = 0;
      while (pos < text.size() && IsDigit(text[pos])) {
        if (++digits > 7) return false;
        fraction = fraction * 10 + (text[pos] - '0');
        ++pos;
      }
      if (digits == 0) return false;
      for (; digits < 7; ++digits) fraction *= 10;
    }
  }
  if (h > 23 || mi > 59 || s > 59) return false;
  *ticks = (static_cast<std::int64_t>(h) * 3600 + mi * 60 + s) * kTicksPerSecond + fraction;
  return true;
}

}  // namespace

bool DaysFromCivil(int year, int month, int day, std::int32_t* days) {
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  // Days of a common year before the first of each month.
  static constexpr int kDaysBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const bool leap = IsLeapYear(year);
  if (day > kMonthDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  // Whole years before this one, each 365 days plus the Gregorian leap days among them.
  const int past = year - 1;
  *days = past * 365 + past / 4 - past / 100 + past / 400 + kDaysBefore[month - 1] +
          (month > 2 && leap ? 1 : 0) + day - 1;
  return true;
}

bool ParseDate(std::string_view text, std::int32_t* days) {
  std::size_t pos = 0;
  return ParseDateAt(text, pos, days) && pos == text.size();
}

bool ParseTimeOfDay(std::string_view text, std::int64_t* ticks) {
  std::size_t pos = 0;
  return ParseTimeAt(text, pos, ticks) && pos == text.size();
}

bool ParseTimestamp(std::string_view text, Timestamp* out) {
  std::size_t pos = 0;
  *out = Timestamp{};
  if (!ParseDateAt(text, pos, &out->days)) return false;
  if (pos < text.size() && (text[pos] == ' ' || text[pos] == 'T') && pos + 1 < text.size() &&
      IsDigit(text[pos + 1])) {
    ++pos;
    if (!ParseTimeAt(text, pos, &out->ticks)) return false;
  }
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos == text.size()) return true;
  if (text[pos] == 'Z' && pos + 1 == text.size()) {
    out->has_offset = true;
    return true;
  }
  if (text[pos] != '+' && text[pos] != '-') return false;
  const int sign = text[pos] == '-' ? -1 : 1;
  ++pos;
  int h = 0, m = 0;
  if (!Digits(text, pos, 2, &h) || !Expect(text, pos, ':') || !Digits(text, pos, 2, &m) ||
      pos != text.size() || h > 14 || m > 59 || h * 60 + m > 14 * 60) {
    return false;
  }
  out->has_offset = true;
  out->offset_minutes = sign * (h * 60 + m);
  return true;
}

DecimalParse ParseScaledDecimal(std::string_view text, int precision, int scale,
                                bool* negative, unsigned __int128* magnitude) {
  std::size_t pos = 0;
  *negative = false;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
    *negative = text[pos] == '-';
    ++pos;
  }
  // Digits gather in 64 bits, which hold any 19 of them, and move to 128 bits only then.
  unsigned __int128 wide = 0;
  std::uint64_t narrow = 0;
  int narrow_digits = 0;
  auto push = [&](unsigned digit) {
    if (narrow_digits == 19) {
      wide = wide * kPow10Upto19[19] + narrow;
      narrow = 0;
      narrow_digits = 0;
    }
    narrow = narrow * 10 + digit;
    ++narrow_digits;
  };
  int integer_digits = 0;
  bool any_digit = false;
  while (pos < text.size() && IsDigit(text[pos])) {
    any_digit = true;
    if (integer_digits != 0 || text[pos] != '0') {
      if (++integer_digits > precision - scale) return DecimalParse::kTooManyDigits;
      push(static_cast<unsigned>(text[pos] - '0'));
    }
    ++pos;
  }
  int fraction_digits = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && IsDigit(text[pos])) {
      any_digit = true;
      if (fraction_digits < scale) {
        push(static_cast<unsigned>(text[pos] - '0'));
      } else if (text[pos] != '0') {
        return DecimalParse::kInexact;
      }
      ++fraction_digits;
      ++pos;
    }
  }
  if (!any_digit || pos != text.size()) return DecimalParse::kMalformed;
  for (int i = fraction_digits; i < scale; ++i) push(0);
  // Most values have at most 19 digits and never reach the 128-bit part.
  const unsigned __int128 value =
      wide == 0 ? narrow : wide * kPow10Upto19[narrow_digits] + narrow;
  *magnitude = value;
  if (value == 0) *negative = false;
  return DecimalParse::kOk;
}

bool ParseGuid(std::string_view text, std::uint8_t out[16]) {
  if (text.size() == 38 && text.front() == '{' && text.back() == '}') {
    text = text.substr(1, 36);
  }
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' ||
      text[23] != '-') {
    return false;
  }
  // Where each byte's two digits start in the text, in wire order: the first three groups
  // little-endian, the last two as written.
  static constexpr std::uint8_t kDigitsAt[16] = {6,  4,  2,  0,  11, 9,  16, 14,
                                                 19, 21, 24, 26, 28, 30, 32, 34};
  int bad = 0;
  for (int i = 0; i < 16; ++i) {
    const int hi = kHexValue[static_cast<unsigned char>(text[kDigitsAt[i]])];
    const int lo = kHexValue[static_cast<unsigned char>(text[kDigitsAt[i] + 1])];
    bad |= hi | lo;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return bad >= 0;
}

}  // namespace mssql_cdc::tds
