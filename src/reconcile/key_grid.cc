#include "reconcile/key_grid.h"

#include <algorithm>
#include <limits>

#include "core/errors.h"

namespace mssql_cdc {

KeyGrid GridOver(std::int64_t min, std::int64_t max) {
  if (max < min) throw InternalError("a key grid over an empty range");
  const Int128 range = Int128(max) - min + 1;
  const Int128 width = (range + kMaxFineSlices - 1) / kMaxFineSlices;
  const Int128 slices = (range + width - 1) / width;
  return KeyGrid{min, static_cast<std::int64_t>(width), static_cast<std::int64_t>(slices)};
}

std::int64_t SliceOf(const KeyGrid& grid, std::int64_t key) {
  if (key < grid.start) return 0;
  const Int128 slice = (Int128(key) - grid.start) / grid.width;
  return static_cast<std::int64_t>(std::min<Int128>(slice, grid.slices - 1));
}

const char* BucketStatusName(BucketStatus status) {
  switch (status) {
    case BucketStatus::kMatch: return "MATCH";
    case BucketStatus::kInFlight: return "IN_FLIGHT";
    case BucketStatus::kMismatch: return "MISMATCH";
  }
  return "MISMATCH";
}

std::vector<Bucket> MergeSlices(const KeyGrid& grid, const SliceTallies& source,
                                const SliceTallies& lake, std::int64_t bucket_rows) {
  if (bucket_rows < 1) throw ConfigError("bucket_rows must be at least 1");
  // The non-empty slices of either side, in order; empty stretches join the bucket before.
  std::vector<std::int64_t> slices;
  for (const auto& [slice, tally] : source) slices.push_back(slice);
  for (const auto& [slice, tally] : lake) slices.push_back(slice);
  std::sort(slices.begin(), slices.end());
  slices.erase(std::unique(slices.begin(), slices.end()), slices.end());

  std::vector<Bucket> buckets(1);
  auto add = [](Tally& into, const SliceTallies& from, std::int64_t slice) {
    if (auto it = from.find(slice); it != from.end()) {
      into.rows += it->second.rows;
      into.key_sum += it->second.key_sum;
    }
  };
  for (const std::int64_t slice : slices) {
    Bucket& open = buckets.back();
    if (std::max(open.source.rows, open.lake.rows) >= bucket_rows) {
      open.last_slice = slice - 1;
      buckets.push_back(Bucket{});
      buckets.back().first_slice = slice;
    }
    add(buckets.back().source, source, slice);
    add(buckets.back().lake, lake, slice);
  }
  buckets.back().last_slice = grid.slices - 1;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    Bucket& b = buckets[i];
    if (i > 0) b.lo = grid.start + b.first_slice * grid.width;
    if (i + 1 < buckets.size()) b.hi = grid.start + (b.last_slice + 1) * grid.width;
    b.status = b.source == b.lake ? BucketStatus::kMatch : BucketStatus::kMismatch;
  }
  return buckets;
}

std::vector<Bucket> SplitBucket(const Bucket& bucket, const KeyGrid& grid, const SliceTallies& source,
                                const SliceTallies& lake, std::int64_t piece_rows) {
  auto within = [&](const SliceTallies& all) {
    SliceTallies some(all.lower_bound(bucket.first_slice), all.upper_bound(bucket.last_slice));
    return some;
  };
  std::vector<Bucket> pieces = MergeSlices(grid, within(source), within(lake), piece_rows);
  pieces.front().lo = bucket.lo;
  pieces.front().first_slice = bucket.first_slice;
  pieces.back().hi = bucket.hi;
  pieces.back().last_slice = bucket.last_slice;
  return pieces;
}

std::size_t BucketOf(const std::vector<Bucket>& buckets, const KeyGrid& grid, std::int64_t key) {
  const std::int64_t slice = SliceOf(grid, key);
  const auto it = std::upper_bound(buckets.begin(), buckets.end(), slice,
                                   [](std::int64_t s, const Bucket& b) { return s < b.first_slice; });
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, (it - buckets.begin()) - 1));
}

}  // namespace mssql_cdc
