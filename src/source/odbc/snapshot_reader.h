// Reads the current rows of a capture instance's source table through ODBC: the
// SnapshotRangeRows statement of statements.h (a key range, the isolation level and lock
// timeout of the options), as operation-0 record batches stamped with the snapshot LSN and commit
// time, identical to the sim backend's. Captured columns gone from the table read as typed
// NULLs.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "source/odbc/row_batch_reader.h"
#include "source/odbc/statements.h"
#include "source/source.h"

namespace mssql_cdc::odbc {

struct SnapshotReadPlan {
  std::string capture_instance_stamp;     // written to _capture_instance
  std::string schema;                     // of the source table, as the server spells it
  std::string table;
  std::vector<CapturedColumn> columns;    // output order
  std::vector<odbc_sql::SnapshotColumn> table_columns;  // per output column: its name now, or absent
  std::vector<odbc_sql::KeyColumn> key;   // as the table spells them; empty: keyless
  // The parts of the range's bounds as text for CAST; nullopt: an open end.
  std::optional<std::vector<std::string>> lo, hi;
  bool snapshot_isolation = false;
  long long lock_timeout_ms = -1;         // < 0: none
  Lsn snapshot_lsn;
  UtcMicros snapshot_commit_ts;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
  FetchOptions fetch;  // what the driver offers
};

std::unique_ptr<arrow::RecordBatchReader> MakeSnapshotReader(
    std::shared_ptr<const ReaderSettings> settings, const SnapshotReadPlan& plan);

}  // namespace mssql_cdc::odbc
