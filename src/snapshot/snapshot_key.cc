#include "snapshot/snapshot_key.h"

#include "source/name_match.h"

namespace mssql_cdc {

SnapshotKey ResolveSnapshotKey(const CaptureInstanceInfo& instance,
                               const std::vector<CapturedColumn>& columns,
                               const std::vector<std::string>& key_columns) {
  SnapshotKey key;
  const std::vector<std::string>& names =
      key_columns.empty() ? instance.index_columns : key_columns;
  if (names.empty()) {
    key.why_not = "the table has no key";
    return key;
  }
  std::vector<std::string> captured;
  for (const auto& column : columns) captured.push_back(column.name);
  for (const auto& name : names) {
    const int i = FindName(captured, name);
    if (i < 0) {
      key = {};
      key.why_not = "key column '" + name + "' is not captured, so its type is unknown";
      return key;
    }
    if (!CanBoundRange(columns[i].type)) {
      key = {};
      key.why_not = "key column '" + name + "' is " + columns[i].type.ToString() +
                    ", which cannot bound a range";
      return key;
    }
    key.columns.push_back(name);
    key.types.push_back(columns[i].type);
  }
  return key;
}

}  // namespace mssql_cdc
