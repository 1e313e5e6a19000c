// The key a snapshot's ranges or chunks are bounded by: snapshotKeys when given, else the
// columns of the capture instance's unique index, each captured and of a type that can bound a
// range (core CanBoundRange). One rule for full snapshots (range_plan.h) and chunked ones
// (chunk_plan.h).
#pragma once

#include <string>
#include <vector>

#include "core/sql_type.h"
#include "source/source.h"

namespace mssql_cdc {

struct SnapshotKey {
  std::vector<std::string> columns;  // empty when the table cannot be read in ranges
  std::vector<SqlType> types;        // one per column
  std::string why_not;               // when columns is empty: why, for the user
  // One column of an integer type: bounded by arithmetic on its values (uniform ranges, a grid).
  bool integer() const { return columns.size() == 1 && IsIntegerKeyType(types[0]); }
};

SnapshotKey ResolveSnapshotKey(const CaptureInstanceInfo& instance,
                               const std::vector<CapturedColumn>& columns,
                               const std::vector<std::string>& key_columns);

}  // namespace mssql_cdc
