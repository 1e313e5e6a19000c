#include "source/column_selection.h"

#include "core/errors.h"
#include "source/name_match.h"

namespace mssql_cdc {

std::vector<CapturedColumn> SelectColumns(const std::vector<CapturedColumn>& captured,
                                          const std::vector<std::string>& requested,
                                          const std::string& capture_instance) {
  if (requested.empty()) return captured;
  std::vector<std::string> names;
  for (const auto& column : captured) names.push_back(column.name);
  std::vector<CapturedColumn> out;
  std::vector<bool> taken(captured.size(), false);
  for (const auto& wanted : requested) {
    const int i = FindName(names, wanted);
    if (i < 0) {
      throw ConfigError("column '" + wanted + "' is not captured by capture instance '" +
                        capture_instance + "'; it captures: " + JoinNames(names));
    }
    if (taken[i]) {
      throw ConfigError("column '" + wanted + "' is asked for twice in the columns to read");
    }
    taken[i] = true;
    out.push_back(captured[i]);
  }
  return out;
}

std::vector<std::string> NamesCaptured(const std::vector<CapturedColumn>& captured,
                                       const std::vector<std::string>& wanted) {
  std::vector<std::string> names;
  for (const auto& column : captured) names.push_back(column.name);
  std::vector<std::string> out;
  for (const auto& name : wanted) {
    if (FindName(names, name) >= 0) out.push_back(name);
  }
  return out;
}

}  // namespace mssql_cdc
