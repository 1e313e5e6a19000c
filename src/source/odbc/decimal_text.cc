#include "source/odbc/decimal_text.h"

#include <array>
#include <cstdint>

namespace mssql_cdc::odbc {
namespace {

using U128 = unsigned __int128;

constexpr std::array<U128, 39> MakePowersOfTen() {
  std::array<U128, 39> powers{};
  U128 v = 1;
  for (auto& p : powers) {
    p = v;
    v *= 10;
  }
  return powers;
}
constexpr std::array<U128, 39> kPowersOfTen = MakePowersOfTen();

}  // namespace

std::optional<arrow::Decimal128> DecimalFromText(std::string_view text, int precision, int scale) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) return std::nullopt;
  const char* p = text.data();
  const char* const end = p + text.size();
  bool negative = false;
  if (p != end && (*p == '-' || *p == '+')) negative = *p++ == '-';
  // Up to 19 digits fit an unsigned 64-bit value: most values never need 128-bit steps.
  std::uint64_t small = 0;
  U128 value = 0;
  int digits = 0;       // significant digits taken (leading zeros skipped)
  int fraction = 0;     // digits after the point
  bool any_digit = false;
  bool point = false;
  for (; p != end; ++p) {
    const char c = *p;
    if (c == '.') {
      if (point) return std::nullopt;
      point = true;
      continue;
    }
    const unsigned d = static_cast<unsigned>(c - '0');
    if (d > 9) return std::nullopt;
    any_digit = true;
    if (point && ++fraction > scale) return std::nullopt;
    if (digits == 0 && d == 0) continue;
    if (++digits > precision) return std::nullopt;
    if (digits <= 19) {
      small = small * 10 + d;
    } else {
      if (digits == 20) value = small;
      value = value * 10 + d;
    }
  }
  if (!any_digit) return std::nullopt;
  if (digits <= 19) value = small;
  const int pad = scale - fraction;
  if (digits + pad > precision) return std::nullopt;  // too many integer digits
  value *= kPowersOfTen[pad];
  if (negative) value = ~value + 1;  // two's complement, as Arrow stores decimals
  return arrow::Decimal128(static_cast<std::int64_t>(value >> 64), static_cast<std::uint64_t>(value));
}

}  // namespace mssql_cdc::odbc
