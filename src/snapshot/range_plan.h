// How a full snapshot cuts a source table into key ranges read in parallel (docs/snapshots.md,
// "Full snapshots, read in parallel"):
//   - one integer key: uniform ranges between MIN and MAX (two seeks). Skewed keys give uneven
//     ranges; the open ends take rows inserted meanwhile.
//   - a composite or non-integer key: ranges of about equal rows, each bound a keyset seek
//     `rows / ranges` keys past the previous one (the row count from sys.sp_spaceused).
//   - no key, a key of a type that cannot bound a range (core CanBoundRange), or a table too
//     small to be worth more than one: one range.
// Ranges follow snapshotChunks: lo inclusive, hi exclusive, null for an open end; the first
// starts and the last ends open, so together they cover every key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/source.h"

namespace mssql_cdc {

struct KeyRange {
  nlohmann::json lo;  // inclusive; null: from the first key
  nlohmann::json hi;  // exclusive; null: to the last key
};

enum class RangeKind { kWhole, kUniform, kKeyset };

struct RangePlan {
  RangeKind kind = RangeKind::kWhole;
  std::vector<std::string> key_columns;  // the key the bounds apply to; empty for kWhole
  std::vector<KeyRange> ranges;          // at least one
  std::string why_whole;                 // for kWhole: why the table is read in one range
};

// Rows a range is worth reading on a connection of its own: fewer per range and the
// snapshot takes fewer ranges.
inline constexpr std::int64_t kMinRangeRows = 50'000;

struct RangePlanRequest {
  CaptureInstanceInfo instance;
  std::vector<CapturedColumn> columns;  // the instance's captured columns, for the key's types
  std::vector<std::string> key_columns;  // snapshotKeys; empty: the instance's index columns
  int ranges = 1;                        // at most, >= 1
  std::int64_t min_range_rows = kMinRangeRows;
};

// [MIN, MAX] cut into `count` ranges of equal width (count >= 1, clamped to the extent's
// size); the first range's lo and the last's hi are open.
std::vector<KeyRange> UniformRanges(std::int64_t min, std::int64_t max, int count);

// Plans the ranges, asking `source` for the key's extent or seeks. The seeks read the key of
// the table once, under the snapshot's isolation level.
RangePlan PlanSnapshotRanges(const RangePlanRequest& request, Source& source);

}  // namespace mssql_cdc
