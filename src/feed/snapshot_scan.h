// Spark mode's batch snapshot source, format("mssql_cdc_snapshot") (docs/snapshots.md,
// 2.2): the driver plans a scan, each task reads one of its ranges through a Source of its own.
//
// A scan is the stamp (snapshotLsn, or the max LSN recorded before any row is read: every
// action plans anew, so every action reads the table afresh with a new stamp) and the ranges:
// the snapshotChunks given ([[chunk, lo, hi], ...], each range tagged with its chunk), or
// those a full snapshot plans (snapshot/range_plan.h) over snapshotKeys or the instance's
// index. Rows come in the output schema as operation-0 rows; with snapshotChunks a last
// column `_chunk INT` says which chunk read each row. READ COMMITTED or SNAPSHOT as
// isolationLevel says, never NOLOCK.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/offset.h"
#include "core/source_options.h"
#include "snapshot/seed.h"
#include "source/open_source.h"

namespace mssql_cdc {

struct SnapshotScanRange {
  nlohmann::json lo;  // inclusive; null: open
  nlohmann::json hi;  // exclusive; null: open
  std::optional<std::int32_t> chunk;
};

struct SnapshotScan {
  Offset stamp;
  std::vector<std::string> key_columns;  // the key the bounds apply to
  std::vector<SnapshotScanRange> ranges;

  std::string ToJson() const;
  // Throws ConfigError when `json` is not what ToJson wrote.
  static SnapshotScan FromJson(std::string_view json);
};

// The rows' schema: the output schema, then `_chunk` (int32) when snapshotChunks is given.
std::shared_ptr<arrow::Schema> SnapshotScanSchema(const SourceOptions& options,
                                                  SourceFactory factory = nullptr);

// Plans a scan of at most `partitions` ranges (snapshotChunks gives its own). Throws
// ConfigError for chunk bounds on a key that cannot bound a range.
SnapshotScan PlanSnapshotScan(const SourceOptions& options, int partitions,
                              SourceFactory factory = nullptr);

// The offset of a snapshot stamped `lsn`: the LSN and its commit time, UTC.
Offset SnapshotScanOffset(const SourceOptions& options, const Lsn& lsn,
                          SourceFactory factory = nullptr);

// A seed's offset (snapshot/seed.h: ResolveSeedPoint) on the options' source.
Offset SeedPoint(const SourceOptions& options, const SeedAsOf& as_of, SourceFactory factory = nullptr);
// A seed copy's columns matched to the instance's captured columns and key (MatchSeedColumns):
// per captured column, its name and the copy's column or nullopt.
std::vector<std::pair<std::string, std::optional<std::string>>> SeedColumnsFor(
    const SourceOptions& options, const std::vector<std::string>& copy_columns,
    bool allow_missing_columns, SourceFactory factory = nullptr);

// Reads range `range` of `scan` through a Source of its own.
std::unique_ptr<arrow::RecordBatchReader> ReadSnapshotScanRange(const SourceOptions& options,
                                                                const SnapshotScan& scan,
                                                                std::size_t range,
                                                                SourceFactory factory = nullptr);

}  // namespace mssql_cdc
