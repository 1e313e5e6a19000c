#include "core/closest_names.h"

#include <algorithm>
#include <utility>

#include "core/ascii.h"

namespace mssql_cdc {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> ClosestNames(std::string_view given, std::span<const std::string_view> known,
                                      std::size_t limit) {
  const std::string wanted = AsciiLower(given);
  const std::size_t within = std::max<std::size_t>(2, wanted.size() / 4);
  std::vector<std::pair<std::size_t, std::string_view>> close;
  for (std::string_view name : known) {
    const std::size_t distance = EditDistance(wanted, AsciiLower(name));
    if (distance <= within) close.emplace_back(distance, name);
  }
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < close.size() && i < limit; ++i) names.emplace_back(close[i].second);
  return names;
}

std::string DidYouMean(std::string_view given, std::span<const std::string_view> known) {
  const std::vector<std::string> names = ClosestNames(given, known);
  if (names.empty()) return "";
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += " or ";
    text += "'" + names[i] + "'";
  }
  return text + "?)";
}

}  // namespace mssql_cdc
