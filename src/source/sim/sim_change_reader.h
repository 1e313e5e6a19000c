// Reads the change rows of one capture instance of a sim database over an LSN range, as
// record batches of the output schema. SimSource resolves names and columns; this only reads.
//
// Rows of "cdc.<ci>_CT" with __$start_lsn in [from, to] come in index order (__$start_lsn,
// __$command_id, __$seqval, __$operation) and are merge-joined in C++ with the entries of
// cdc_lsn_time_mapping over the same range, both read under one SQLite read snapshot (the
// reader's own connection). Every mapping entry of the range, idle ones included, goes
// through one CommitTimeConverter in LSN order, so each commit time is parsed and converted
// once and the fall-back rule sees the commits in order; a range that starts inside a repeated
// hour first feeds it the entries back to the start of that hour. A change row with no
// mapping entry is left out, as SQL Server's inner join does.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "source/source.h"

namespace mssql_cdc {

struct SimChangeQuery {
  std::string path;              // the sim database file
  std::string capture_instance;  // exact name, as cdc_change_tables spells it
  std::vector<CapturedColumn> columns;  // to read, in output order
  Lsn from;
  Lsn to;
  bool include_command_id = true;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
};

// Opens its own read-only connection so that a half-read reader never holds the Source's
// connection in an old snapshot. Throws ConfigError for batch_rows < 1, SourceError when the
// file cannot be read.
std::unique_ptr<arrow::RecordBatchReader> MakeSimChangeReader(const SimChangeQuery& query,
                                                              const SourceClock& clock);

}  // namespace mssql_cdc
