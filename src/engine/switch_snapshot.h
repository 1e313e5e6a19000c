// snapshot_on_switch (docs/spark.md, docs/schema-changes.md): after the batch that first reads a newer
// capture instance, the table's current rows as operation-0 rows, so that rows no change has
// touched since get the new instance's columns in bronze.
//
// The rows are stamped with the max LSN L recorded before the read (invariant 5 of docs/invariants.md: a row may be
// newer than L, never older), read in key ranges at once as the bootstrap reads, and appended
// in one bronze commit tagged txn(<app_id>#switch, batch id): a replayed batch finds its txn and
// reads nothing, so a crash never doubles the snapshot. Its files are listed in the batch's
// staged list until the batch's commit marker, so a crash mid-read leaves none behind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "delta/table.h"
#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

class SourceClock;

struct SwitchSnapshotRequest {
  CaptureInstanceInfo instance;  // the newer instance the batch switched to
  std::vector<std::string> columns;  // the captured columns bronze reads (those it captures)
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::string app_id;
  std::int64_t batch_id = 0;
  int partitions = 1;
  std::int64_t arrow_batch_size = 10'000;
  std::int64_t arrow_batch_bytes = kDefaultBatchDataBytes;
  delta::WriteOptions write;
};

// The txn app id of the snapshot after a switch; its version is the batch id.
std::string SwitchSnapshotTxnAppId(const std::string& app_id);

// Takes the snapshot into `bronze` unless bronze holds its txn; returns the rows written (0
// when it was there already).
std::int64_t SnapshotAfterSwitch(const SwitchSnapshotRequest& request, Source& source,
                                 SourcePool& sources, const SourceClock& clock,
                                 delta::DeltaTable& bronze);

}  // namespace mssql_cdc
