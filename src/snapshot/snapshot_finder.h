// Whether bronze already holds a snapshot of a table (docs/snapshots.md, docs/reference/tables.md): a
// rerun of a bootstrap, or snapshot(), finds it and reads nothing. A snapshot is found by its
// operation-0 rows, of any capture instance of the table (names matched ignoring case), the
// newest by coalesce(_snapshot, _start_lsn): a whole snapshot, a seed, or a chunked snapshot
// once its first wave landed (its rows carry S in _snapshot and a chunk in _chunk).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/offset.h"
#include "delta/table.h"
#include "source/source.h"

namespace mssql_cdc {

struct FoundSnapshot {
  Offset offset;        // its LSN and that LSN's commit time, as its rows carry them
  bool chunked = false; // rows with a _chunk: a chunked snapshot, open or complete
};

// Reads the operation-0 rows of `bronze` (files whose statistics say they hold none are
// skipped) of the capture instances `instances`. With `newer_than`, only a snapshot newer than
// that LSN is looked for, and files whose statistics show none are not read.
std::optional<FoundSnapshot> FindSnapshot(const delta::DeltaTable& bronze,
                                          const std::vector<std::string>& instances,
                                          const std::optional<std::string>& newer_than = std::nullopt);

// The capture instance names of `instance`'s table that `listed` holds, `instance` first.
std::vector<std::string> InstancesOfTable(const std::vector<CaptureInstanceInfo>& listed,
                                          const CaptureInstanceInfo& instance);

}  // namespace mssql_cdc
