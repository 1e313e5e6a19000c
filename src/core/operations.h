// The change rows' _operation codes: SQL Server's __$operation (1 delete, 2 insert, 3 the row
// before an update, 4 the row after it) and 0 for a row of a snapshot. Their names are the
// reference library's OPERATIONS (mssql_cdc.OPERATIONS reads them from here).
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace mssql_cdc {

inline constexpr std::array<std::pair<int, std::string_view>, 5> kOperationNames = {{
    {0, "snapshot"}, {1, "delete"}, {2, "insert"}, {3, "update_before"}, {4, "update_after"}}};

// The name of an _operation code; "unknown" for any other number.
constexpr std::string_view OperationName(int code) {
  for (const auto& [known, name] : kOperationNames) {
    if (known == code) return name;
  }
  return "unknown";
}

}  // namespace mssql_cdc
