// How Source matches the names a caller gives (capture instances, columns) against the names
// a database has, and how it lists them in messages.
//
// Names match as SQL Server's default collations compare them: exactly first, else ignoring
// case with ASCII folding (core/ascii.h), which is also the simulator's rule for its
// identifiers and NOCASE columns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ascii.h"

namespace mssql_cdc {

// The index of the name equal to `wanted`, else of the one equal ignoring case; -1 when none
// matches, -2 when several differ from it only in case.
template <typename Names>
int FindName(const Names& names, std::string_view wanted) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == wanted) return static_cast<int>(i);
  }
  int found = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (EqualsIgnoringAsciiCase(names[i], wanted)) found = found == -1 ? static_cast<int>(i) : -2;
  }
  return found;
}

// "a, b, c"; "(none)" when there are no names.
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace mssql_cdc
