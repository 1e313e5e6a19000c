// Tier 1 of reconcile (docs/reconcile.md): a grid of at most kMaxFineSlices slices over
// a one-column integer key, the row count and key sum of each slice on both sides, and the
// slices merged into buckets of about `bucket_rows` rows. A bucket whose counts and sums agree
// matches; a key replaced by another in one bucket changes the sum where the count stays.
// Both sides tally on the same grid, so the buckets are cut at the same keys for both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/int128.h"

namespace mssql_cdc {

inline constexpr std::int64_t kMaxFineSlices = 100'000;

// Slice i holds the keys in [start + i * width, start + (i + 1) * width). Keys outside the grid
// (the lake may hold keys the source no longer has) are tallied in the first or last slice.
struct KeyGrid {
  std::int64_t start = 0;
  std::int64_t width = 1;
  std::int64_t slices = 1;
};

// The grid over [min, max], both inclusive: the narrowest width that needs no more than
// kMaxFineSlices slices, and no slice past max's.
KeyGrid GridOver(std::int64_t min, std::int64_t max);

// The slice of `key`, clamped into [0, slices).
std::int64_t SliceOf(const KeyGrid& grid, std::int64_t key);

struct Tally {
  std::int64_t rows = 0;
  Int128 key_sum = 0;
  friend bool operator==(const Tally&, const Tally&) = default;
};
using SliceTallies = std::map<std::int64_t, Tally>;  // non-empty slices only

enum class BucketStatus { kMatch, kInFlight, kMismatch };
const char* BucketStatusName(BucketStatus status);  // "MATCH", "IN_FLIGHT", "MISMATCH"

// Keys [lo, hi); nullopt is an open end (the first bucket's lo, the last one's hi).
struct Bucket {
  std::optional<std::int64_t> lo, hi;
  std::int64_t first_slice = 0, last_slice = 0;
  Tally source, lake;
  BucketStatus status = BucketStatus::kMatch;
};

// Consecutive slices merged until one side's rows reach `bucket_rows` (>= 1); every slice of
// the grid is in exactly one bucket, so the buckets tile the whole key space. Status: kMatch
// when the tallies agree, else kMismatch (reconcile then tells which of these are in flight).
std::vector<Bucket> MergeSlices(const KeyGrid& grid, const SliceTallies& source,
                                const SliceTallies& lake, std::int64_t bucket_rows);

// A bucket cut as MergeSlices cuts the grid, at `piece_rows`: what Tier 2 reads at once, so that
// a bucket of any size is compared in memory bounded by the piece. The first piece starts at
// the bucket's lo and the last ends at its hi.
std::vector<Bucket> SplitBucket(const Bucket& bucket, const KeyGrid& grid, const SliceTallies& source,
                                const SliceTallies& lake, std::int64_t piece_rows);

// The index of the bucket holding `key` in `buckets` (as MergeSlices made them).
std::size_t BucketOf(const std::vector<Bucket>& buckets, const KeyGrid& grid, std::int64_t key);

}  // namespace mssql_cdc
