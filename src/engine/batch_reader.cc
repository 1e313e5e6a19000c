#include "engine/batch_reader.h"

#include "source/column_selection.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <chrono>

#include "core/errors.h"
#include "core/timezone.h"
#include "core/arrow_status.h"
#include "delta/compute_kernels.h"
#include "source/output_schema.h"
#include "source/parallel_reads.h"

namespace mssql_cdc {
namespace {

std::shared_ptr<arrow::Array> Checked(arrow::Result<std::shared_ptr<arrow::Array>> result,
                                      const std::string& what) {
  if (!result.ok()) throw InternalError(what + ": " + result.status().ToString());
  return *result;
}

// A column of `length` copies of `value` in `type` (int32 or utf8), or NULLs.
std::shared_ptr<arrow::Array> Constant(const std::shared_ptr<arrow::DataType>& type,
                                       std::int64_t length,
                                       const std::shared_ptr<arrow::Scalar>& value) {
  if (!value) return Checked(arrow::MakeArrayOfNull(type, length), "NULL column");
  auto cast = value->CastTo(type);
  if (!cast.ok()) throw InternalError("constant column: " + cast.status().ToString());
  return Checked(arrow::MakeArrayFromScalar(**cast, length), "constant column");
}

struct RangeResult {
  std::vector<delta::AddFile> files;
  RowStats stats;
  RangeMeasures measures;
};

RangeResult ReadRange(const BatchReadRequest& request, const LsnRange& range, Source& source,
                      const SourceClock& clock, delta::DataFileStream& files) {
  RangeResult result;
  result.measures.from = range.from;
  result.measures.to = range.to;
  result.measures.round_trip_ms = source.RoundTripMs();
  const auto started = std::chrono::steady_clock::now();
  ChangeReadRequest read;
  read.capture_instance =
      range.capture_instance.empty() ? request.capture_instance : range.capture_instance;
  read.from = range.from;
  read.to = range.to;
  if (!request.columns.empty()) {
    read.columns = NamesCaptured(source.CapturedColumns(read.capture_instance), request.columns);
  }
  read.include_command_id = request.include_command_id;
  read.batch_rows = request.arrow_batch_size;
  read.batch_bytes = request.arrow_batch_bytes;
  read.waits = std::make_shared<ReadWaits>();
  auto reader = source.ReadChanges(read, clock);
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader->ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    result.measures.bytes += arrow::util::TotalBufferSize(*batch);
    auto aligned = AlignToBronze(batch, request.bronze_schema, request.batch_id, std::nullopt);
    result.stats.Add(StatsOf(*aligned));
    files.Write(aligned);
  }
  result.files = files.Finish();
  result.measures.rows = result.stats.rows;
  result.measures.network_wait_ms = read.waits->network_wait_ms;
  result.measures.reader = read.waits->reader;
  result.measures.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

template <typename T>
void KeepMin(std::optional<T>& into, const std::optional<T>& value) {
  if (value && (!into || *value < *into)) into = value;
}
template <typename T>
void KeepMax(std::optional<T>& into, const std::optional<T>& value) {
  if (value && (!into || *value > *into)) into = value;
}

}  // namespace

void RowStats::Add(const RowStats& other) {
  rows += other.rows;
  deletes += other.deletes;
  inserts += other.inserts;
  updates += other.updates;
  KeepMin(min_lsn, other.min_lsn);
  KeepMax(max_lsn, other.max_lsn);
  KeepMin(min_commit_ts, other.min_commit_ts);
  KeepMax(max_commit_ts, other.max_commit_ts);
}

std::shared_ptr<arrow::RecordBatch> AlignToBronze(
    const std::shared_ptr<arrow::RecordBatch>& batch,
    const std::shared_ptr<arrow::Schema>& bronze_schema, std::optional<std::int64_t> batch_id,
    const std::optional<std::string>& snapshot, std::optional<std::int32_t> chunk) {
  const std::int64_t n = batch->num_rows();
  arrow::ArrayVector columns;
  columns.reserve(bronze_schema->num_fields());
  for (const auto& field : bronze_schema->fields()) {
    if (field->name() == kBatchIdColumn) {
      columns.push_back(Constant(field->type(), n,
                                 batch_id ? arrow::MakeScalar(static_cast<std::int64_t>(*batch_id))
                                          : nullptr));
      continue;
    }
    if (field->name() == kSnapshotColumn) {
      columns.push_back(
          Constant(field->type(), n, snapshot ? arrow::MakeScalar(*snapshot) : nullptr));
      continue;
    }
    if (field->name() == kChunkColumn) {
      columns.push_back(Constant(field->type(), n, chunk ? arrow::MakeScalar(*chunk) : nullptr));
      continue;
    }
    auto column = batch->GetColumnByName(field->name());
    if (!column) {
      // _chunk, and any column this read does not carry, are NULL.
      columns.push_back(Checked(arrow::MakeArrayOfNull(field->type(), n), "NULL column"));
      continue;
    }
    if (!column->type()->Equals(*field->type())) {
      delta::EnsureComputeKernels();
      auto cast = arrow::compute::Cast(*column, field->type());
      if (!cast.ok()) {
        throw SchemaChangedError("column '" + field->name() + "' read as " +
                                 column->type()->ToString() + " cannot become bronze's " +
                                 field->type()->ToString() + ": " + cast.status().message());
      }
      column = *cast;
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(bronze_schema, n, std::move(columns));
}

namespace {

// The operations a batch's counts count, each in its own count; before images (3) and snapshot
// rows (0) are not counted.
struct CountedOperation {
  std::int32_t code;
  std::int64_t RowStats::*count;
  const char* name;
};
constexpr CountedOperation kCountedOperations[] = {
    {1, &RowStats::deletes, "deletes"},
    {2, &RowStats::inserts, "inserts"},
    {4, &RowStats::updates, "updates"},
};

}  // namespace

RowStats StatsOf(const arrow::RecordBatch& batch) {
  RowStats stats;
  stats.rows = batch.num_rows();
  if (auto ops = batch.GetColumnByName(std::string(kOperationColumn))) {
    const auto& typed = static_cast<const arrow::Int32Array&>(*ops);
    for (std::int64_t i = 0; i < typed.length(); ++i) {
      if (typed.IsNull(i)) continue;
      for (const auto& counted : kCountedOperations) {
        if (typed.Value(i) == counted.code) ++(stats.*counted.count);
      }
    }
  }
  if (auto lsns = batch.GetColumnByName(std::string(kStartLsnColumn))) {
    // LSN text is fixed width, so string order is LSN order. Compared in place: one string is
    // made per batch, not per row.
    const auto& typed = static_cast<const arrow::StringArray&>(*lsns);
    std::optional<std::string_view> low, high;
    for (std::int64_t i = 0; i < typed.length(); ++i) {
      if (typed.IsNull(i)) continue;
      const std::string_view value = typed.GetView(i);
      if (!low || value < *low) low = value;
      if (!high || value > *high) high = value;
    }
    if (low) stats.min_lsn = std::string(*low);
    if (high) stats.max_lsn = std::string(*high);
  }
  if (auto times = batch.GetColumnByName(std::string(kCommitTsColumn))) {
    const auto& typed = static_cast<const arrow::TimestampArray&>(*times);
    for (std::int64_t i = 0; i < typed.length(); ++i) {
      if (typed.IsNull(i)) continue;
      const UtcMicros value{typed.Value(i)};
      if (!stats.min_commit_ts || value < *stats.min_commit_ts) stats.min_commit_ts = value;
      if (!stats.max_commit_ts || value > *stats.max_commit_ts) stats.max_commit_ts = value;
    }
  }
  return stats;
}

BatchRead ReadBatchRanges(const BatchReadRequest& request, Source& first_source,
                          SourcePool& sources, const SourceClock& clock,
                          const RangeFileStreams& file_streams) {
  const std::size_t n = request.ranges.size();
  std::vector<RangeResult> results(n);
  // Every range's stream lives until all threads ended: a failure anywhere deletes the files
  // of every range, finished or not.
  std::vector<std::unique_ptr<delta::DataFileStream>> streams(n);
  for (std::size_t i = 0; i < n; ++i) streams[i] = file_streams(i);
  try {
    RunOnSources(n, first_source, sources, [&](std::size_t i, Source& source) {
      results[i] = ReadRange(request, request.ranges[i], source, clock, *streams[i]);
    });
  } catch (...) {
    for (auto& stream : streams) stream->Discard();  // no commit will name them
    throw;
  }
  BatchRead read;
  for (auto& result : results) {
    read.stats.Add(result.stats);
    read.measures.push_back(result.measures);
    read.files.insert(read.files.end(), result.files.begin(), result.files.end());
  }
  return read;
}

std::vector<std::string> RowStatsAggregates() {
  const std::string op(kOperationColumn), lsn(kStartLsnColumn), ts(kCommitTsColumn);
  std::vector<std::string> aggregates = {
      "count(1) AS `rows`",
      "min(`" + lsn + "`) AS `min_lsn`",
      "max(`" + lsn + "`) AS `max_lsn`",
      "min(`" + ts + "`) AS `min_commit_ts`",
      "max(`" + ts + "`) AS `max_commit_ts`",
  };
  for (const auto& counted : kCountedOperations) {
    aggregates.push_back("count(CASE WHEN `" + op + "` = " + std::to_string(counted.code) +
                         " THEN 1 END) AS `" + counted.name + "`");
  }
  return aggregates;
}

}  // namespace mssql_cdc
