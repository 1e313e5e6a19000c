// How a full snapshot cuts a table into ranges: uniform over one integer key, keyset seeks of
// about equal rows over any other key, one range where a key cannot bound one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/database.h"
#include "sim/transaction.h"
#include "snapshot/range_plan.h"
#include "source/sim/sim_source.h"
#include "tests/testing/cdc_table.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using json = nlohmann::json;

std::vector<std::string> Bounds(const std::vector<KeyRange>& ranges) {
  std::vector<std::string> out;
  for (const auto& range : ranges) out.push_back(range.lo.dump() + ".." + range.hi.dump());
  return out;
}

TEST(UniformRangesTest, EqualWidthsWithOpenEnds) {
  EXPECT_THAT(Bounds(UniformRanges(0, 99, 4)),
              ::testing::ElementsAre("null..25", "25..50", "50..75", "75..null"));
  EXPECT_THAT(Bounds(UniformRanges(5, 5, 3)), ::testing::ElementsAre("null..null"));
  EXPECT_THAT(Bounds(UniformRanges(1, 3, 8)), ::testing::ElementsAre("null..2", "2..3", "3..null"));
  // The whole bigint domain: no overflow, bounds in order.
  const auto wide = UniformRanges(INT64_MIN, INT64_MAX, 3);
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_LT(wide[0].hi.get<std::int64_t>(), wide[1].hi.get<std::int64_t>());
  EXPECT_GT(wide[0].hi.get<std::int64_t>(), INT64_MIN / 2);
}

class RangePlanTest : public ::testing::Test {
 protected:
  RangePlanTest() : path_(dir_.File("cdc.db")) {
    auto db = sim::SimDatabase::Create(path_, {});
    auto table = [&](const char* name, std::vector<const char*> columns,
                     std::vector<std::string> key) {
      testing::CreateCdcTable(*db, name, columns, std::move(key));
    };
    table("dbo.ints", {"id bigint not null", "v int"}, {"id"});
    table("dbo.pairs", {"a nvarchar(10) not null", "b int not null", "v int"}, {"a", "b"});
    table("dbo.floats", {"f float not null", "v int"}, {"f"});
    auto t = db->Begin();
    for (int i = 0; i < 100; ++i) {
      // Skewed integer keys: most rows near the start.
      t->Insert(sim::ParseTableName("dbo.ints"), {{"id", i < 90 ? i : 1000 * i}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.pairs"), {{"a", i % 2 ? "odd" : "even"}, {"b", i}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.floats"), {{"f", i * 0.5}, {"v", i}});
    }
    t->Commit();
    source_ = OpenSimSource(path_);
  }

  RangePlan Plan(const std::string& ci, int ranges, std::int64_t min_rows = 1,
                 std::vector<std::string> key = {}) {
    RangePlanRequest request;
    request.instance = source_->ResolveCaptureInstance(ci);
    request.columns = source_->CapturedColumns(ci);
    request.key_columns = std::move(key);
    request.ranges = ranges;
    request.min_range_rows = min_rows;
    return PlanSnapshotRanges(request, *source_);
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Source> source_;
};

TEST_F(RangePlanTest, OneIntegerKeyIsCutUniformlyBetweenMinAndMax) {
  const RangePlan plan = Plan("dbo_ints", 3);
  EXPECT_EQ(plan.kind, RangeKind::kUniform);
  EXPECT_THAT(Bounds(plan.ranges), ::testing::ElementsAre("null..33000", "33000..66000", "66000..null"));
}

TEST_F(RangePlanTest, OtherKeysAreCutByKeysetSeeksIntoEqualRows) {
  const RangePlan plan = Plan("dbo_pairs", 4);
  EXPECT_EQ(plan.kind, RangeKind::kKeyset);
  EXPECT_EQ(plan.key_columns, (std::vector<std::string>{"a", "b"}));
  // 25 keys each, in key order ("even" before "odd").
  EXPECT_THAT(Bounds(plan.ranges), ::testing::ElementsAre(R"(null..["even",50])", R"(["even",50]..["odd",1])",
                                                          R"(["odd",1]..["odd",51])", R"(["odd",51]..null)"));
  // snapshotKeys: another key the bounds apply to.
  const RangePlan by_v = Plan("dbo_pairs", 2, 1, {"v"});
  EXPECT_EQ(by_v.kind, RangeKind::kUniform);
  EXPECT_THAT(Bounds(by_v.ranges), ::testing::ElementsAre("null..50", "50..null"));
}

TEST_F(RangePlanTest, OneRangeWhereNoMoreIsWorthIt) {
  EXPECT_EQ(Plan("dbo_floats", 4).kind, RangeKind::kWhole);
  EXPECT_THAT(Plan("dbo_floats", 4).why_whole, ::testing::HasSubstr("float, which cannot bound a range"));
  EXPECT_EQ(Plan("dbo_ints", 1).kind, RangeKind::kWhole);
  const RangePlan small = Plan("dbo_ints", 8, kMinRangeRows);
  EXPECT_EQ(small.kind, RangeKind::kWhole);
  EXPECT_THAT(small.why_whole, ::testing::HasSubstr("about 100 rows"));
  EXPECT_EQ(small.ranges.size(), 1u);
  EXPECT_TRUE(small.ranges[0].lo.is_null() && small.ranges[0].hi.is_null());
  // 100 rows at 40 a range: two ranges, not eight.
  EXPECT_EQ(Plan("dbo_pairs", 8, 40).ranges.size(), 2u);
}

}  // namespace
}  // namespace mssql_cdc
