// Reads the change rows of one micro-batch: its commit-aligned ranges in parallel, one Source
// per range, each record batch aligned to the bronze schema and stamped with the batch id.
// Also counts what the facts row reports of the rows (operations, LSN and commit time ranges)
// and measures each range's read (batch_measures.h).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "engine/batch_measures.h"
#include "plan/planner.h"
#include "source/open_source.h"

namespace mssql_cdc {

class SourceClock;

// What the rows of a batch hold, summed over its ranges.
struct RowStats {
  std::int64_t rows = 0;
  std::int64_t deletes = 0, inserts = 0, updates = 0;  // operations 1, 2 and 4
  std::optional<std::string> min_lsn, max_lsn;
  std::optional<UtcMicros> min_commit_ts, max_commit_ts;

  void Add(const RowStats& other);
};

struct BatchRead {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;  // in range order
  RowStats stats;
  std::vector<RangeMeasures> measures;  // one per range, in range order; no end measures
};

struct BatchReadRequest {
  std::string capture_instance;
  std::vector<LsnRange> ranges;
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::int64_t batch_id = 0;
  bool include_command_id = true;
  std::int64_t arrow_batch_size = 10'000;
};

// Reads every range; the first with `first_source` (the planning source, so a one-range batch
// opens nothing new), the others with a Source each from `factory`, on their own threads.
// The first failure is rethrown after every thread has ended.
BatchRead ReadBatchRanges(const BatchReadRequest& request, Source& first_source,
                          const SourceFactory& factory, const SourceClock& clock);

// `batch` with the columns of `bronze_schema` in its order: columns found by name (cast when
// the type differs), _batch_id, _snapshot and _chunk as given, any other column NULL.
std::shared_ptr<arrow::RecordBatch> AlignToBronze(
    const std::shared_ptr<arrow::RecordBatch>& batch,
    const std::shared_ptr<arrow::Schema>& bronze_schema, std::optional<std::int64_t> batch_id,
    const std::optional<std::string>& snapshot);

// Counts and ranges of the rows of `batch` (a bronze or output-schema batch).
RowStats StatsOf(const arrow::RecordBatch& batch);

}  // namespace mssql_cdc
