// Reads a snapshot's key ranges (range_plan.h) in parallel, each on a Source of its own
// (source/parallel_reads.h), every record batch passed through the caller's transform (bronze
// alignment and stamps). Two ways to take the rows:
//   - WriteInto: each range into a data file stream of its own, for a Delta writer that can
//     name several streams' files in one commit (the native engine);
//   - Merged: one reader that yields every range's batches as they come, for a writer that
//     takes one stream of batches (Spark through the Python bindings). It holds at most two
//     batches per range.
// Either way memory is bounded by the ranges' batches and streams, never by the table.
#pragma once

#include <arrow/type_fwd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "delta/data_file_stream.h"
#include "snapshot/range_plan.h"
#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

struct ParallelSnapshotRequest {
  std::string capture_instance;
  std::vector<std::string> columns;  // empty: every captured column
  RangePlan plan;
  Lsn snapshot_lsn;
  UtcMicros snapshot_commit_ts;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
};

// What each batch read becomes before it is written (given the index of the range it was read
// from), and the schema that gives.
struct SnapshotBatchTransform {
  std::shared_ptr<arrow::Schema> schema;
  std::function<std::shared_ptr<arrow::RecordBatch>(const std::shared_ptr<arrow::RecordBatch>&,
                                                    std::size_t range)>
      apply;
};

class ParallelSnapshot {
 public:
  // `first_source` reads the first range on the calling thread (WriteInto) or on the reading
  // thread behind Merged; the others borrow from `sources` when one is free.
  ParallelSnapshot(ParallelSnapshotRequest request, Source& first_source, SourcePool& sources,
                   SnapshotBatchTransform transform);

  // Reads every range into streams(i); returns every stream's files in range order. On a
  // failure every stream's files are deleted and the first failure is rethrown.
  std::vector<delta::AddFile> WriteInto(
      const std::function<std::unique_ptr<delta::DataFileStream>(std::size_t)>& streams);

  // One reader over every range; the reads start at its first ReadNext. Destroying it stops
  // them. A failing range ends the reader with its error.
  std::unique_ptr<arrow::RecordBatchReader> Merged();

  const ParallelSnapshotRequest& request() const { return request_; }
  // The schema of the batches the transform gives.
  const std::shared_ptr<arrow::Schema>& schema() const { return transform_.schema; }
  // Rows read so far, over every range.
  std::int64_t rows() const { return rows_.load(); }
  // Rows and seconds range i took; complete once the read of every range returned.
  std::int64_t range_rows(std::size_t i) const { return ranges_[i].rows; }
  double range_seconds(std::size_t i) const { return ranges_[i].seconds; }

 private:
  friend class MergedSnapshotReader;
  // Reads range i with `source`, handing each transformed batch to `sink`.
  void ReadRange(std::size_t i, Source& source,
                 const std::function<void(const std::shared_ptr<arrow::RecordBatch>&)>& sink);

  ParallelSnapshotRequest request_;
  Source& first_source_;
  SourcePool& sources_;
  SnapshotBatchTransform transform_;
  std::atomic<std::int64_t> rows_{0};
  struct RangeMeasure {
    std::int64_t rows = 0;
    double seconds = 0;
  };
  std::vector<RangeMeasure> ranges_;  // each written by the one thread reading its range
};

}  // namespace mssql_cdc
