#include "reconcile/key_grid.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

TEST(KeyGridTest, AtMostAHundredThousandSlicesOverTheRange) {
  const KeyGrid small = GridOver(-10, 56);
  EXPECT_EQ(small.start, -10);
  EXPECT_EQ(small.width, 1);
  EXPECT_EQ(small.slices, 67);
  const KeyGrid wide = GridOver(1, 10'000'000);
  EXPECT_EQ(wide.width, 100);
  EXPECT_EQ(wide.slices, 100'000);
  const KeyGrid whole = GridOver(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  EXPECT_LE(whole.slices, kMaxFineSlices);
  EXPECT_EQ(SliceOf(whole, std::numeric_limits<std::int64_t>::max()), whole.slices - 1);
}

TEST(KeyGridTest, KeysOutsideTheGridFallInTheEdgeSlices) {
  const KeyGrid grid{0, 10, 5};
  EXPECT_EQ(SliceOf(grid, -1000), 0);
  EXPECT_EQ(SliceOf(grid, 9), 0);
  EXPECT_EQ(SliceOf(grid, 10), 1);
  EXPECT_EQ(SliceOf(grid, 1000), 4);
}

TEST(KeyGridTest, SlicesMergeIntoBucketsThatTileTheKeySpace) {
  const KeyGrid grid{0, 10, 10};
  SliceTallies source{{0, {5, 25}}, {1, {5, 75}}, {4, {5, 225}}, {9, {5, 475}}};
  SliceTallies lake = source;
  lake[4] = {5, 226};  // one key replaced by the next: same count, another sum
  const auto buckets = MergeSlices(grid, source, lake, 10);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].lo, std::nullopt);
  EXPECT_EQ(buckets[0].hi, 40);
  EXPECT_EQ(buckets[0].status, BucketStatus::kMatch);
  EXPECT_EQ(buckets[1].lo, 40);
  EXPECT_EQ(buckets[1].hi, std::nullopt);
  EXPECT_EQ(buckets[1].source.rows, 10);
  EXPECT_EQ(buckets[1].status, BucketStatus::kMismatch);
  EXPECT_EQ(BucketOf(buckets, grid, -5), 0u);
  EXPECT_EQ(BucketOf(buckets, grid, 39), 0u);
  EXPECT_EQ(BucketOf(buckets, grid, 40), 1u);
  EXPECT_EQ(BucketOf(buckets, grid, 500), 1u);
  // A slice only the lake holds still counts.
  lake[7] = {1, 70};
  EXPECT_EQ(MergeSlices(grid, source, lake, 10)[1].lake.rows, 11);
  EXPECT_EQ(MergeSlices(grid, {}, {}, 10).size(), 1u);
  EXPECT_THROW(MergeSlices(grid, source, lake, 0), ConfigError);
}

TEST(KeyGridTest, SumsPassBigint) {
  Int128 sum = 0;
  for (int i = 0; i < 4; ++i) sum += std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(Int128Text(sum), "36893488147419103228");
  EXPECT_EQ(ParseInt128("36893488147419103228"), sum);
  EXPECT_EQ(ParseInt128("-12.000"), Int128(-12));
  EXPECT_EQ(ParseInt128("1e3"), std::nullopt);
  EXPECT_EQ(ParseInt128("1.5"), std::nullopt);
}

}  // namespace
}  // namespace mssql_cdc
