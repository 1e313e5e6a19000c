// Reads the change rows of one micro-batch: its commit-aligned ranges in parallel, one Source
// per range, each record batch aligned to the bronze schema, stamped with the batch id and
// written at once into the range's data files (delta/data_file_stream.h), so that a batch of
// any size holds only what each range's file stream and reader hold. Also counts what the
// facts row reports of the rows (operations, LSN and commit time ranges) and measures each
// range's read (batch_measures.h).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "delta/actions.h"
#include "delta/data_file_stream.h"
#include "engine/batch_measures.h"
#include "plan/planner.h"
#include "source/open_source.h"
#include "source/output_schema.h"
#include "source/source_pool.h"

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
  std::vector<delta::AddFile> files;  // in range order, none committed
  RowStats stats;
  std::vector<RangeMeasures> measures;  // one per range, in range order; no end measures
};

struct BatchReadRequest {
  std::string capture_instance;
  std::vector<LsnRange> ranges;
  std::shared_ptr<arrow::Schema> bronze_schema;
  // Captured columns to read (those each range's instance captures); empty: all of them.
  std::vector<std::string> columns;
  std::int64_t batch_id = 0;
  bool include_command_id = true;
  std::int64_t arrow_batch_size = 10'000;
  std::int64_t arrow_batch_bytes = kDefaultBatchDataBytes;
};

// The data file stream the rows of range `range` are written into.
using RangeFileStreams =
    std::function<std::unique_ptr<delta::DataFileStream>(std::size_t range)>;

// Reads every range into its file stream: the first with `first_source` (the planning source,
// so a one-range batch borrows nothing more), each other one on a thread of its own with a
// Source borrowed from `sources` when one is free at once, else after the first on this
// thread, so that a batch never waits for a Source another batch holds. The first failure is
// rethrown after every thread has ended; the file streams of a failed batch delete their files.
BatchRead ReadBatchRanges(const BatchReadRequest& request, Source& first_source,
                          SourcePool& sources, const SourceClock& clock,
                          const RangeFileStreams& file_streams);

// `batch` with the columns of `bronze_schema` in its order: columns found by name (cast when
// the type differs), _batch_id, _snapshot and _chunk as given, any other column NULL.
std::shared_ptr<arrow::RecordBatch> AlignToBronze(
    const std::shared_ptr<arrow::RecordBatch>& batch,
    const std::shared_ptr<arrow::Schema>& bronze_schema, std::optional<std::int64_t> batch_id,
    const std::optional<std::string>& snapshot, std::optional<std::int32_t> chunk = std::nullopt);

// Counts and ranges of the rows of `batch` (a bronze or output-schema batch).
RowStats StatsOf(const arrow::RecordBatch& batch);
// The same counts and ranges as Spark SQL aggregate expressions over a DataFrame of such rows
// ("count(1) AS rows", ...), named as RowStats names them: Spark mode aggregates its batch where
// it lies instead of bringing the rows to the engine.
std::vector<std::string> RowStatsAggregates();

}  // namespace mssql_cdc
