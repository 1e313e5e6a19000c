// Reads the change rows of one capture instance over an LSN range through ODBC: the
// ChangeRows statement of statements.h, joined to cdc.lsn_time_mapping by the server,
// ordered by (__$start_lsn, __$command_id, __$seqval, __$operation), into record batches
// identical to the sim backend's. Commit times are converted to UTC by one
// CommitTimeConverter over the SourceClock, once per commit, in commit order.
//
// Unlike the sim backend, only the commits that have rows of this instance pass through the
// converter; a range starting inside the hour repeated after a fall-back is primed with the
// one commit before the range. Both matter only for the repeated hour of a zone with DST.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/timezone.h"
#include "source/odbc/row_batch_reader.h"
#include "source/source.h"

namespace mssql_cdc::odbc {

struct ChangeReadPlan {
  std::string capture_instance;        // as the server spells it
  std::vector<CapturedColumn> columns;  // output order
  Lsn from;
  Lsn to;
  bool include_command_id = true;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
  FetchOptions fetch;  // what the driver offers
  std::shared_ptr<ReadWaits> waits;  // the request's; the engine's TDS reader fills it
};

// Throws ConfigError for batch_rows < 1 and the errors of OutputSchema; connects on the
// first ReadNext.
std::unique_ptr<arrow::RecordBatchReader> MakeChangeReader(
    std::shared_ptr<const ReaderSettings> settings, const ChangeReadPlan& plan,
    const SourceClock& clock);

}  // namespace mssql_cdc::odbc
