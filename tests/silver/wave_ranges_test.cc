// The ranges of a silver call's wave chunks: only for the snapshot's own one-column key of an
// integer, date or timestamp type; bounds in the key's units, a datetime2(7) bound rounded so
// that a silver microsecond counts as inside only when every tick it stands for is.
#include "silver/wave_ranges.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "core/time.h"

namespace mssql_cdc {
namespace {

constexpr char kS[] = "0x00000000000000000020";

SilverApplyPlan WavePlan(const std::vector<int>& chunks) {
  SilverApplyPlan plan;
  plan.open_snapshot_lsn = kS;
  plan.open_snapshot_app_id = "app";
  plan.wave_chunks = chunks;
  for (int chunk : chunks) plan.wave_stamps[chunk] = "0x0000000000000000002" + std::to_string(chunk);
  return plan;
}

ChunkPlan IntPlan() {
  return ChunkPlan{"int", {"id"}, 10, {{0, nullptr, 4, 1}, {1, 4, 7, 1}, {2, 7, nullptr, 1}}};
}

std::shared_ptr<arrow::Schema> Bronze(std::shared_ptr<arrow::DataType> key_type) {
  return arrow::schema({arrow::field("id", std::move(key_type)), arrow::field("name", arrow::utf8())});
}

TEST(WaveRangesTest, AnIntegerKeysChunksInTheirOrder) {
  auto plan = IntPlan();
  plan.keys = {"ID"};  // as snapshotKeys spelled it; silver's keys are in bronze's spelling
  const auto ranges = WaveRangesOf(WavePlan({2, 0}), plan, {"id"}, *Bronze(arrow::int32()));
  ASSERT_TRUE(ranges);
  EXPECT_EQ(ranges->unit, KeyUnit::kInteger);
  EXPECT_EQ(ranges->snapshot_lsn, kS);
  ASSERT_EQ(ranges->ranges.size(), 2u);
  EXPECT_EQ(ranges->RangeOf(-1000)->chunk, 0);
  EXPECT_EQ(ranges->RangeOf(3)->stamp, "0x00000000000000000020");
  EXPECT_EQ(ranges->RangeOf(4), nullptr);  // chunk 1 is not in the waves
  EXPECT_EQ(ranges->RangeOf(6), nullptr);
  EXPECT_EQ(ranges->RangeOf(7)->chunk, 2);
  EXPECT_EQ(ranges->RangeOf(1'000'000)->chunk, 2);
  EXPECT_TRUE(ranges->Meets(5, 7));
  EXPECT_FALSE(ranges->Meets(4, 6));
}

TEST(WaveRangesTest, NoRangesWhereTheyCannotBeTrusted) {
  const auto bronze = Bronze(arrow::int32());
  auto rebuild = WavePlan({0});
  rebuild.rebuild = true;
  EXPECT_FALSE(WaveRangesOf(rebuild, IntPlan(), {"id"}, *bronze));
  EXPECT_FALSE(WaveRangesOf(WavePlan({}), IntPlan(), {"id"}, *bronze));
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), IntPlan(), {"name"}, *bronze));        // not the snapshot's key
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), IntPlan(), {"id", "name"}, *bronze));  // two columns
  auto unstamped = WavePlan({0});
  unstamped.wave_stamps.clear();
  EXPECT_FALSE(WaveRangesOf(unstamped, IntPlan(), {"id"}, *bronze));
  auto beyond = WavePlan({3});
  EXPECT_FALSE(WaveRangesOf(beyond, IntPlan(), {"id"}, *bronze));  // no chunk 3 in the plan
  // Keys of other types: text, decimal, a time with its offset.
  ChunkPlan keyset{"keyset", {"id"}, 10, {{0, nullptr, "m", 1}, {1, "m", nullptr, 1}}};
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), keyset, {"id"}, *Bronze(arrow::utf8())));
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), keyset, {"id"}, *Bronze(arrow::decimal128(18, 0))));
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), keyset, {"id"},
                            *Bronze(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))));
}

TEST(WaveRangesTest, ADateKeyInDays) {
  ChunkPlan plan{"keyset", {"id"}, 10, {{0, nullptr, "2024-02-01", 1}, {1, "2024-02-01", nullptr, 1}}};
  const auto ranges = WaveRangesOf(WavePlan({1}), plan, {"id"}, *Bronze(arrow::date32()));
  ASSERT_TRUE(ranges);
  EXPECT_EQ(ranges->unit, KeyUnit::kDay);
  const auto february = DaysFromCivil(2024, 2, 1);
  EXPECT_EQ(ranges->RangeOf(february - 1), nullptr);
  EXPECT_EQ(ranges->RangeOf(february)->chunk, 1);
  // A bound that is not a date leaves the waves to completion.
  ChunkPlan odd{"keyset", {"id"}, 10, {{0, nullptr, "2024-02-01T10:00:00", 1}}};
  EXPECT_FALSE(WaveRangesOf(WavePlan({0}), odd, {"id"}, *Bronze(arrow::date32())));
}

TEST(WaveRangesTest, ADatetime2BoundBetweenTwoMicrosecondsLeavesTheEdgeOut) {
  // Chunk 1 holds source keys in [.0000005, 1.0000005): silver's .000000 may stand for .0000003
  // (chunk 0) and 1.000000 for 1.0000007 (chunk 2); .000001 and .999999 stand for keys inside.
  ChunkPlan plan{"keyset", {"id"}, 10,
                 {{0, nullptr, "2024-01-01T00:00:00.0000005", 1},
                  {1, "2024-01-01T00:00:00.0000005", "2024-01-01T00:00:01.0000005", 1},
                  {2, "2024-01-01T00:00:01.0000005", nullptr, 1}}};
  const auto ranges = WaveRangesOf(WavePlan({1}), plan, {"id"}, *Bronze(arrow::timestamp(arrow::TimeUnit::MICRO)));
  ASSERT_TRUE(ranges);
  EXPECT_EQ(ranges->unit, KeyUnit::kMicros);
  const auto midnight = DaysFromCivil(2024, 1, 1) * kMicrosPerDay;
  EXPECT_EQ(ranges->RangeOf(midnight), nullptr);
  EXPECT_EQ(ranges->RangeOf(midnight + 1)->chunk, 1);
  EXPECT_EQ(ranges->RangeOf(midnight + kMicrosPerSecond - 1)->chunk, 1);
  EXPECT_EQ(ranges->RangeOf(midnight + kMicrosPerSecond), nullptr);
  // Whole microseconds (datetime2(6), datetime, smalldatetime) are compared as they are.
  ChunkPlan whole{"keyset", {"id"}, 10, {{0, "2024-01-01 00:00:00.5", "2024-01-01 00:00:01", 1}}};
  const auto exact = WaveRangesOf(WavePlan({0}), whole, {"id"}, *Bronze(arrow::timestamp(arrow::TimeUnit::MICRO)));
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->RangeOf(midnight + 500'000)->chunk, 0);
  EXPECT_EQ(exact->RangeOf(midnight + 499'999), nullptr);
  EXPECT_EQ(exact->RangeOf(midnight + kMicrosPerSecond), nullptr);
}

}  // namespace
}  // namespace mssql_cdc
