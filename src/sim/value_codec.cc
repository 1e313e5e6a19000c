#include "sim/value_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/time.h"
#include "core/utf8.h"

namespace mssql_cdc::sim {
namespace {

constexpr std::int64_t kTicksPerSecond = 10'000'000;  // 100 ns ticks, datetime2(7)
constexpr std::int64_t kTicksPerDay = 86'400 * kTicksPerSecond;

[[noreturn]] void Reject(std::string_view column, const SqlType& type, const Value& value,
                         std::string_view why) {
  std::string shown = value.DebugString();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw ConfigError("column " + std::string(column) + " (" + type.ToString() + "): value " +
                    shown + " " + std::string(why));
}

// ---- integers and floats ----

Value EncodeInteger(const SqlType& t, const Value& v, std::string_view column) {
  std::int64_t x;
  if (v.is_int()) {
    x = v.as_int();
  } else if (v.is_double() && std::nearbyint(v.as_double()) == v.as_double() &&
             std::fabs(v.as_double()) < 9.2e18) {
    x = static_cast<std::int64_t>(v.as_double());
  } else {
    Reject(column, t, v, "is not an integer");
  }
  if (t.kind() == SqlTypeKind::kBit) return Value(static_cast<std::int64_t>(x != 0));
  std::int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (t.kind() == SqlTypeKind::kTinyInt) lo = 0, hi = 255;
  if (t.kind() == SqlTypeKind::kSmallInt) lo = -32768, hi = 32767;
  if (t.kind() == SqlTypeKind::kInt) lo = INT32_MIN, hi = INT32_MAX;
  if (x < lo || x > hi) {
    Reject(column, t, v,
           "is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  }
  return Value(x);
}

Value EncodeFloat(const SqlType& t, const Value& v, std::string_view column) {
  double x;
  if (v.is_double()) {
    x = v.as_double();
  } else if (v.is_int()) {
    x = static_cast<double>(v.as_int());
  } else {
    Reject(column, t, v, "is not a number");
  }
  if (!std::isfinite(x)) Reject(column, t, v, "is not finite (SQL Server has no NaN or infinity)");
  const bool single = t.kind() == SqlTypeKind::kReal || t.max_length <= 24;
  if (single) {
    if (std::fabs(x) > 3.40282346638528859811704183484516925e38) {
      Reject(column, t, v, "is out of the range of real");
    }
    x = static_cast<double>(static_cast<float>(x));
  }
  return Value(x);
}

// ---- decimals ----

using Int128 = __int128;

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string digits;
  while (v != 0) {
    int d = static_cast<int>(v % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  return negative ? "-" + digits : digits;
}

// Parses "[+-]digits[.digits]" into an unscaled integer at `scale`, rounding extra fraction
// digits half away from zero. Returns nullopt on malformed text or more than 38 digits.
std::optional<Int128> ParseDecimal(std::string_view s, int scale) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  Int128 unscaled = 0;
  int int_digits = 0, frac_digits = 0;
  bool round_up = false, any = false, seen_point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    any = true;
    if (!seen_point) {
      if (unscaled == 0 && c == '0') continue;  // leading zeros
      if (++int_digits > 38) return std::nullopt;
      unscaled = unscaled * 10 + (c - '0');
    } else if (frac_digits < scale) {
      ++frac_digits;
      unscaled = unscaled * 10 + (c - '0');
    } else if (frac_digits == scale) {
      ++frac_digits;  // the first dropped digit decides the rounding
      round_up = c >= '5';
    }
  }
  if (!any) return std::nullopt;
  for (int k = std::min(frac_digits, scale); k < scale; ++k) unscaled *= 10;
  if (round_up) unscaled += 1;
  return negative ? -unscaled : unscaled;
}

Int128 Pow10(int n) {
  Int128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

std::string FormatDecimal(Int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  std::string digits = Int128ToString(negative ? -unscaled : unscaled);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<std::size_t>(scale + 1 - static_cast<int>(digits.size())), '0');
    }
    digits.insert(digits.size() - static_cast<std::size_t>(scale), ".");
  }
  return (negative ? "-" : "") + digits;
}

Value EncodeDecimal(const SqlType& t, const Value& v, std::string_view column) {
  int precision = t.precision, scale = t.scale;
  std::string text;
  if (v.is_string()) {
    text = v.as_string();
  } else if (v.is_int()) {
    text = std::to_string(v.as_int());
  } else if (v.is_double() && std::isfinite(v.as_double())) {
    // Print the double's exact decimal expansion (enough digits), then round once.
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", std::min(scale + 40, 80), v.as_double());
    text = buf;
  } else {
    Reject(column, t, v, "is not a decimal number (give a number or a string like \"-12.34\")");
  }
  auto unscaled = ParseDecimal(text, scale);
  if (!unscaled) Reject(column, t, v, "is not a decimal number like \"-12.34\"");
  if (t.IsOneOf({SqlTypeKind::kMoney, SqlTypeKind::kSmallMoney})) {
    const Int128 limit = t.kind() == SqlTypeKind::kMoney ? (Int128(922337203685477) * 10000 + 5807)
                                           : Int128(2147483647);
    if (*unscaled > limit || *unscaled < -limit - 1) Reject(column, t, v, "is out of range");
  } else if (*unscaled >= Pow10(precision) || *unscaled <= -Pow10(precision)) {
    Reject(column, t, v,
           "needs more than " + std::to_string(precision - scale) +
               " digits before the decimal point");
  }
  return Value(FormatDecimal(*unscaled, scale));
}

// ---- dates and times ----

struct Parsed {
  std::int64_t days = 0;   // since 1970-01-01
  std::int64_t ticks = 0;  // within the day, 100 ns
  std::optional<int> offset_minutes;
};

bool Digits(std::string_view s, std::size_t* pos, int n, int* out) {
  if (*pos + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<std::size_t>(n);
  *out = v;
  return true;
}

bool At(std::string_view s, std::size_t pos, char c) { return pos < s.size() && s[pos] == c; }

bool ParseDate(std::string_view s, std::size_t* pos, std::int64_t* days) {
  int y, m, d;
  if (!Digits(s, pos, 4, &y) || !At(s, *pos, '-')) return false;
  ++*pos;
  if (!Digits(s, pos, 2, &m) || !At(s, *pos, '-')) return false;
  ++*pos;
  if (!Digits(s, pos, 2, &d)) return false;
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0)) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// "HH:MM[:SS[.fffffff]]"; more than 7 fraction digits are refused.
bool ParseTime(std::string_view s, std::size_t* pos, std::int64_t* ticks) {
  int h, mi, sec = 0;
  if (!Digits(s, pos, 2, &h) || !At(s, *pos, ':')) return false;
  ++*pos;
  if (!Digits(s, pos, 2, &mi)) return false;
  std::int64_t fraction = 0;
  if (At(s, *pos, ':')) {
    ++*pos;
    if (!Digits(s, pos, 2, &sec)) return false;
    if (At(s, *pos, '.')) {
      ++*pos;
      int n = 0;
      while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
        if (++n > 7) return false;
        fraction = fraction * 10 + (s[*pos] - '0');
        ++*pos;
      }
      if (n == 0) return false;
      for (; n < 7; ++n) fraction *= 10;
    }
  }
  if (h > 23 || mi > 59 || sec > 59) return false;
  *ticks = (h * 3600LL + mi * 60LL + sec) * kTicksPerSecond + fraction;
  return true;
}

// " +HH:MM", "+HH:MM" or "Z".
bool ParseOffset(std::string_view s, std::size_t* pos, int* minutes) {
  if (At(s, *pos, ' ')) ++*pos;
  if (At(s, *pos, 'Z')) {
    ++*pos;
    *minutes = 0;
    return true;
  }
  if (!At(s, *pos, '+') && !At(s, *pos, '-')) return false;
  const bool negative = s[(*pos)++] == '-';
  int h, m;
  if (!Digits(s, pos, 2, &h) || !At(s, *pos, ':')) return false;
  ++*pos;
  if (!Digits(s, pos, 2, &m) || m > 59) return false;
  *minutes = (negative ? -1 : 1) * (h * 60 + m);
  return *minutes >= -840 && *minutes <= 840;
}

std::optional<Parsed> ParseTemporal(const SqlType& t, std::string_view s) {
  Parsed p;
  std::size_t pos = 0;
  if (t.kind() == SqlTypeKind::kTime) {
    if (!ParseTime(s, &pos, &p.ticks)) return std::nullopt;
  } else {
    if (!ParseDate(s, &pos, &p.days)) return std::nullopt;
    if (t.kind() != SqlTypeKind::kDate && pos < s.size() && (s[pos] == ' ' || s[pos] == 'T')) {
      ++pos;
      if (!ParseTime(s, &pos, &p.ticks)) return std::nullopt;
    }
    if (t.kind() == SqlTypeKind::kDateTimeOffset && pos < s.size()) {
      int minutes;
      if (!ParseOffset(s, &pos, &minutes)) return std::nullopt;
      p.offset_minutes = minutes;
    }
  }
  if (pos != s.size()) return std::nullopt;
  return p;
}

std::string FormatTicks(std::int64_t ticks) {
  const std::int64_t secs = ticks / kTicksPerSecond;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%07lld",
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60), static_cast<long long>(ticks % kTicksPerSecond));
  return buf;
}

// Division rounding toward minus infinity: instants before 1970 are negative tick counts.
std::int64_t FloorMod(std::int64_t value, std::int64_t unit) {
  return value - FloorDiv(value, unit) * unit;
}

std::int64_t RoundTo(std::int64_t value, std::int64_t unit) {
  return FloorDiv(value + unit / 2, unit) * unit;
}

Value EncodeTemporal(const SqlType& t, const Value& v, std::string_view column) {
  static const std::string kFormats[] = {"YYYY-MM-DD", "HH:MM:SS[.fffffff]",
                                         "YYYY-MM-DD HH:MM:SS[.fffffff]",
                                         "YYYY-MM-DD HH:MM:SS[.fffffff] [+HH:MM]"};
  const std::string& format = t.kind() == SqlTypeKind::kDate             ? kFormats[0]
                              : t.kind() == SqlTypeKind::kTime           ? kFormats[1]
                              : t.kind() == SqlTypeKind::kDateTimeOffset ? kFormats[3]
                                                           : kFormats[2];
  if (!v.is_string()) Reject(column, t, v, "is not a string of the form " + format);
  auto p = ParseTemporal(t, v.as_string());
  if (!p) Reject(column, t, v, "is not a valid " + t.name + " of the form " + format);
  // Round the fraction to the type's precision; a carry may roll into the next day.
  std::int64_t total = p->days * kTicksPerDay + p->ticks;
  if (t.kind() == SqlTypeKind::kDateTime) {
    // 1/300 s, shown as milliseconds ending in 0, 3 or 7.
    const std::int64_t fraction = FloorMod(total, kTicksPerSecond);
    const std::int64_t base = total - fraction;
    const std::int64_t three_hundredths = (fraction * 300 + kTicksPerSecond / 2) / kTicksPerSecond;
    const std::int64_t ms = (three_hundredths * 10 + 1) / 3;
    total = base + ms * 10'000;
  } else if (t.kind() == SqlTypeKind::kSmallDateTime) {
    total = RoundTo(total, 60 * kTicksPerSecond);
  } else if (t.kind() != SqlTypeKind::kDate) {
    std::int64_t unit = 1;
    for (int i = t.scale; i < 7; ++i) unit *= 10;
    total = RoundTo(total, unit);
  }
  if (t.kind() == SqlTypeKind::kTime) {
    if (total >= kTicksPerDay) Reject(column, t, v, "rounds past 23:59:59.9999999");
    return Value(FormatTicks(total));
  }
  const std::int64_t days = FloorDiv(total, kTicksPerDay);
  const std::int64_t ticks = FloorMod(total, kTicksPerDay);
  std::int64_t min_days = DaysFromCivil(1, 1, 1), max_days = DaysFromCivil(9999, 12, 31);
  if (t.kind() == SqlTypeKind::kDateTime) min_days = DaysFromCivil(1753, 1, 1);
  if (t.kind() == SqlTypeKind::kSmallDateTime) {
    min_days = DaysFromCivil(1900, 1, 1);
    max_days = DaysFromCivil(2079, 6, 6);
  }
  if (days < min_days || days > max_days) {
    Reject(column, t, v,
           "is outside the range of " + t.name + " (" + FormatDate(min_days) + " to " +
               FormatDate(max_days) + ")");
  }
  if (t.kind() == SqlTypeKind::kDate) return Value(FormatDate(days));
  std::string out = FormatDate(days) + " " + FormatTicks(ticks);
  if (t.kind() == SqlTypeKind::kDateTimeOffset) {
    const int m = p->offset_minutes.value_or(0);
    char buf[64];
    std::snprintf(buf, sizeof buf, " %c%02d:%02d", m < 0 ? '-' : '+', std::abs(m) / 60,
                  std::abs(m) % 60);
    out += buf;
  }
  return Value(out);
}

// ---- strings, binary, uniqueidentifier ----

// Counts UTF-16 code units of valid UTF-8, or returns -1 for invalid UTF-8.
std::int64_t Utf16Length(std::string_view s) {
  std::int64_t units = 0;
  for (std::size_t i = 0; i < s.size();) {
    const long cp = DecodeUtf8At(s, i);
    if (cp < 0) return -1;
    units += cp >= 0x10000 ? 2 : 1;
  }
  return units;
}

Value EncodeString(const SqlType& t, const Value& v, std::string_view column) {
  if (!v.is_string()) Reject(column, t, v, "is not a string");
  std::string s = v.as_string();
  const std::int64_t units = Utf16Length(s);
  if (units < 0) Reject(column, t, v, "is not valid UTF-8");
  const bool unicode =
      t.IsOneOf({SqlTypeKind::kNChar, SqlTypeKind::kNVarChar, SqlTypeKind::kNText});
  // char/varchar lengths count bytes, nchar/nvarchar UTF-16 code units, as SQL Server does.
  const std::int64_t length = unicode ? units : static_cast<std::int64_t>(s.size());
  if (t.max_length > 0 &&
      t.IsOneOf({SqlTypeKind::kChar, SqlTypeKind::kVarChar, SqlTypeKind::kNChar, SqlTypeKind::kNVarChar}) &&
      length > t.max_length) {
    Reject(column, t, v,
           "is " + std::to_string(length) + (unicode ? " characters" : " bytes") +
               " long, more than " + std::to_string(t.max_length) +
               " (String or binary data would be truncated)");
  }
  if (t.IsOneOf({SqlTypeKind::kChar, SqlTypeKind::kNChar})) {
    s.append(static_cast<std::size_t>(t.max_length - length), ' ');
  }
  return Value(std::move(s));
}

std::optional<std::string> DecodeHex(std::string_view s) {
  if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  s.remove_prefix(2);
  if (s.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size() / 2);
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

Value EncodeBinary(const SqlType& t, const Value& v, std::string_view column) {
  std::string bytes;
  if (v.is_bytes()) {
    bytes = v.as_bytes().data;
  } else if (v.is_string()) {
    auto decoded = DecodeHex(v.as_string());
    if (!decoded) Reject(column, t, v, "is not binary (give bytes or a hex string \"0x0A1B\")");
    bytes = std::move(*decoded);
  } else {
    Reject(column, t, v, "is not binary (give bytes or a hex string \"0x0A1B\")");
  }
  if (t.max_length > 0 && static_cast<std::int64_t>(bytes.size()) > t.max_length) {
    Reject(column, t, v,
           "is " + std::to_string(bytes.size()) + " bytes long, more than " +
               std::to_string(t.max_length) + " (String or binary data would be truncated)");
  }
  if (t.kind() == SqlTypeKind::kBinary) {
    bytes.append(static_cast<std::size_t>(t.max_length) - bytes.size(), '\0');
  }
  return Value(Bytes{std::move(bytes)});
}

Value EncodeGuid(const SqlType& t, const Value& v, std::string_view column) {
  if (!v.is_string()) Reject(column, t, v, "is not a uniqueidentifier string");
  std::string_view s = v.as_string();
  if (s.size() == 38 && s.front() == '{' && s.back() == '}') s = s.substr(1, 36);
  if (s.size() != 36) Reject(column, t, v, "is not of the form 8-4-4-4-12 hex digits");
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    char& c = out[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') Reject(column, t, v, "is not of the form 8-4-4-4-12 hex digits");
      continue;
    }
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) {
      Reject(column, t, v, "is not of the form 8-4-4-4-12 hex digits");
    }
  }
  return Value(out);
}

}  // namespace

bool IsLegacyLob(const SqlType& t) {
  return t.IsOneOf({SqlTypeKind::kText, SqlTypeKind::kNText, SqlTypeKind::kImage});
}

bool IsLob(const SqlType& t) {
  return IsLegacyLob(t) || t.kind() == SqlTypeKind::kXml ||
         (t.IsMax() && t.IsOneOf({SqlTypeKind::kVarChar, SqlTypeKind::kNVarChar, SqlTypeKind::kVarBinary}));
}

bool IsRowversion(const SqlType& t) { return t.family() == SqlTypeFamily::kRowVersion; }

void CheckSimulatedType(const SqlType& t, std::string_view column) {
  if (t.family() != SqlTypeFamily::kUnsupported) return;
  throw ConfigError("column " + std::string(column) + ": type " + t.ToString() +
                    " is not supported by the simulator (use one of the numeric, character, "
                    "date/time, binary or uniqueidentifier types)");
}

std::string_view StorageAffinity(const SqlType& t) {
  switch (t.family()) {
    case SqlTypeFamily::kInteger: return "INTEGER";
    case SqlTypeFamily::kFloatingPoint: return "REAL";
    case SqlTypeFamily::kBinary: case SqlTypeFamily::kRowVersion: return "BLOB";
    default: return "TEXT";
  }
}

Value EncodeValue(const SqlType& t, const Value& v, std::string_view column) {
  if (v.is_null()) return v;
  switch (t.family()) {
    case SqlTypeFamily::kInteger: return EncodeInteger(t, v, column);
    case SqlTypeFamily::kFloatingPoint: return EncodeFloat(t, v, column);
    case SqlTypeFamily::kDecimal: return EncodeDecimal(t, v, column);
    case SqlTypeFamily::kTemporal: return EncodeTemporal(t, v, column);
    case SqlTypeFamily::kCharacter: return EncodeString(t, v, column);
    case SqlTypeFamily::kBinary: return EncodeBinary(t, v, column);
    case SqlTypeFamily::kUniqueIdentifier: return EncodeGuid(t, v, column);
    case SqlTypeFamily::kRowVersion:
      throw ConfigError("column " + std::string(column) +
                        " is a rowversion column: the database sets it, leave it out");
    case SqlTypeFamily::kUnsupported:
      break;
  }
  CheckSimulatedType(t, column);
  throw InternalError("no encoding for type " + t.ToString());
}

Value EncodeCastText(const SqlType& t, const std::string& text, std::string_view column) {
  if (t.family() == SqlTypeFamily::kInteger) {
    std::int64_t x = 0;
    const char* end = text.data() + text.size();
    const auto [at, error] = std::from_chars(text.data(), end, x);
    if (error != std::errc() || at != end) Reject(column, t, Value(text), "is not an integer");
    return EncodeInteger(t, Value(x), column);
  }
  if (t.family() == SqlTypeFamily::kFloatingPoint) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      Reject(column, t, Value(text), "is not a number");
    }
    return EncodeFloat(t, Value(x), column);
  }
  return EncodeValue(t, Value(text), column);
}

}  // namespace mssql_cdc::sim
