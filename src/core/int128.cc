#include "core/int128.h"

#include <algorithm>

namespace mssql_cdc {
namespace {

using Unsigned128 = unsigned __int128;

// 10^38 - 1, the largest decimal(38,0).
constexpr Unsigned128 MaxDecimal38() {
  Unsigned128 value = 1;
  for (int i = 0; i < 38; ++i) value *= 10;
  return value - 1;
}

}  // namespace

std::string Int128Text(Int128 value) {
  const bool negative = value < 0;
  Unsigned128 magnitude = negative ? Unsigned128(0) - Unsigned128(value) : Unsigned128(value);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + int(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<Int128> ParseInt128(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  // A decimal(38,0) may come back printed with a zero fraction.
  if (const auto point = text.find('.'); point != std::string_view::npos) {
    const std::string_view fraction = text.substr(point + 1);
    if (!std::all_of(fraction.begin(), fraction.end(), [](char c) { return c == '0'; })) return std::nullopt;
    text = text.substr(0, point);
  }
  if (text.empty()) return std::nullopt;
  Unsigned128 magnitude = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    magnitude = magnitude * 10 + Unsigned128(c - '0');
    if (magnitude > MaxDecimal38()) return std::nullopt;
  }
  return negative ? -Int128(magnitude) : Int128(magnitude);
}

}  // namespace mssql_cdc
