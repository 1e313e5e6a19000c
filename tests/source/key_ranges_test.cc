// Keyset seeks and ranged snapshot reads, the same through both backends: the sim file read
// directly, and the odbc backend through unixODBC and an in-process `sim serve`. Keys come
// back as bounds that read the same rows again, for integer, composite (text and datetime2),
// binary and decimal keys; a key that cannot bound a range (float) reads whole and refuses
// ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/errors.h"
#include "read_helpers.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "source/key_extent.h"
#include "source/open_source.h"
#include "source/sim/sim_source.h"
#include "tests/testing/served_sim.h"
#include "tests/testing/cdc_table.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;
using namespace testing;  // mssql_cdc::testing

constexpr int kRows = 23;

class KeyRangesTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    path_ = dir_->File("cdc.db");
    sim::CreateOptions options;
    options.database_name = "cdcdb";
    auto db = sim::SimDatabase::Create(path_, options);
    auto table = [&](const char* name, std::vector<const char*> columns,
                     std::vector<std::string> key) {
      testing::CreateCdcTable(*db, name, columns, std::move(key));
    };
    table("dbo.numbers", {"id int not null", "v int"}, {"id"});
    table("dbo.events", {"region nvarchar(10) not null", "at datetime2(7) not null", "v int"},
          {"region", "at"});
    table("dbo.blobs", {"k varbinary(8) not null", "v int"}, {"k"});
    table("dbo.prices", {"p decimal(9,2) not null", "v int"}, {"p"});
    table("dbo.readings", {"r float not null", "v int"}, {"r"});
    auto t = db->Begin();
    for (int i = 0; i < kRows; ++i) {
      // Keys out of insertion order, with gaps.
      const int id = (i * 7) % kRows * 3 - 10;
      t->Insert(sim::ParseTableName("dbo.numbers"), {{"id", id}, {"v", i}});
      char at[40];
      std::snprintf(at, sizeof at, "2026-01-%02d 10:00:00.%07d", 1 + i % 5, 1234567 + i);
      t->Insert(sim::ParseTableName("dbo.events"), {{"region", i % 3 == 0 ? "north" : (i % 3 == 1 ? "south" : "east")},
                               {"at", at}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.blobs"), {{"k", sim::Bytes{std::string(1, static_cast<char>(255 - i)) + "x"}}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.prices"), {{"p", std::to_string(i * 37 % 101) + "." + std::to_string(10 + i)}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.readings"), {{"r", i * 0.1}, {"v", i}});
    }
    t->Commit();
  }
  static void TearDownTestSuite() {
    served_.reset();
    delete dir_;
    dir_ = nullptr;
  }

  std::unique_ptr<Source> Open() {
    if (GetParam() == "sim") return OpenSimSource(path_);
    if (!served_) served_ = std::make_unique<ServedSim>(path_);
    // Each question names its instance; the option is required all the same.
    const Options options = served_->SourceOptionsText().MergedWith({{"captureInstance", "dbo_numbers"}});
    return MakeSourceFactory(SourceOptions::Parse(options))();
  }

  static std::int64_t Count(Source& source, const std::string& ci, const json& lo, const json& hi,
                            std::multiset<std::int64_t>* seen) {
    SnapshotReadRequest request;
    request.capture_instance = ci;
    request.lo = lo;
    request.hi = hi;
    auto reader = source.ReadSnapshot(request);
    const auto batch = ReadAll(*reader);
    for (auto v : Ints<arrow::Int32Array>(*batch, "v")) seen->insert(v);
    return batch->num_rows();
  }

  // Bounds every `step` rows by keyset seeks, then every range read: the ranges tile the table.
  static void ExpectSeeksTile(Source& source, const std::string& ci, int step) {
    KeyQuery key{ci, {}};
    std::vector<json> bounds{nullptr};
    json from = nullptr;
    while (auto next = source.KeyAt(key, from, step)) {
      bounds.push_back(*next);
      from = *next;
    }
    bounds.push_back(nullptr);
    ASSERT_EQ(bounds.size(), static_cast<std::size_t>((kRows - 1) / step + 2)) << ci;
    std::multiset<std::int64_t> seen;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const auto rows = Count(source, ci, bounds[i], bounds[i + 1], &seen);
      EXPECT_EQ(rows, i + 2 < bounds.size() ? step : kRows - step * static_cast<int>(i))
          << ci << " range " << bounds[i].dump() << " .. " << bounds[i + 1].dump();
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRows));
    EXPECT_EQ(std::set<std::int64_t>(seen.begin(), seen.end()).size(), static_cast<std::size_t>(kRows));
  }

  static TempDir* dir_;
  static std::string path_;
  static std::unique_ptr<ServedSim> served_;
};

TempDir* KeyRangesTest::dir_ = nullptr;
std::string KeyRangesTest::path_;
std::unique_ptr<ServedSim> KeyRangesTest::served_;

TEST_P(KeyRangesTest, IntegerKeyExtentAndSeeks) {
  auto source = Open();
  const KeyQuery key{"dbo_numbers", {}};
  EXPECT_EQ(source->KeyAt(key, nullptr, 0), json(-10));
  EXPECT_EQ(source->LastKey(key), json((kRows - 1) * 3 - 10));
  EXPECT_EQ(source->KeyAt(key, 0, 0), json(2));     // the first key at or after 0
  EXPECT_EQ(source->KeyAt(key, "-10", 2), json(-4));  // text bounds are CAST
  EXPECT_EQ(source->KeyAt(key, nullptr, kRows), std::nullopt);
  EXPECT_EQ(source->RowEstimate("dbo_numbers"), kRows);
  ExpectSeeksTile(*source, "dbo_numbers", 5);
}

TEST_P(KeyRangesTest, AnIntegerKeysRangeAndBucketsWithinBounds) {
  auto source = Open();
  const KeyQuery key{"dbo_numbers", {}};
  // The keys are -10, -7, ..., 56.
  EXPECT_EQ(KeyRangeWithin(*source, key, std::nullopt, std::nullopt), std::pair(json(-10), json(56)));
  EXPECT_EQ(KeyRangeWithin(*source, key, 0, 20), std::pair(json(2), json(17)));
  EXPECT_EQ(KeyRangeWithin(*source, key, 57, std::nullopt), std::pair(json(nullptr), json(nullptr)));
  EXPECT_EQ(KeyRangeWithin(*source, key, std::nullopt, -10), std::pair(json(nullptr), json(nullptr)));
  const auto tally = [](const std::vector<SliceCount>& buckets) {
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> out;
    for (const auto& b : buckets) out.emplace_back(b.slice, b.rows, Int128Text(b.key_sum));
    return out;
  };
  using Row = std::tuple<std::int64_t, std::int64_t, std::string>;
  // Open ends: from the first key to one past the last; bucket -1 holds -10 to -1.
  const auto all = tally(KeyBuckets(*source, key, 10, std::nullopt, std::nullopt));
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all.front(), Row(-1, 4, "-22"));
  EXPECT_EQ(all.back(), Row(5, 3, "159"));
  // Ends that cut a bucket count only the keys inside them.
  EXPECT_EQ(tally(KeyBuckets(*source, key, 10, 5, 25)),
            (std::vector<Row>{Row(0, 2, "13"), Row(1, 3, "42"), Row(2, 2, "43")}));
  EXPECT_TRUE(KeyBuckets(*source, key, 10, 25, 25).empty());
  EXPECT_THROW(KeyBuckets(*source, key, 0, 0, 1), ConfigError);
}

TEST_P(KeyRangesTest, AChunkedSnapshotsExtentByTheKeysKind) {
  auto source = Open();
  // One integer key: its MIN, MAX and the row estimate.
  EXPECT_EQ(SnapshotExtent(*source, KeyQuery{"dbo_numbers", {"id"}}).dump(),
            R"({"kind":"int","lo":-10,"hi":56,"rows":23})");
  // Any other key: its largest key, a list for several columns, a value for one.
  const auto events = SnapshotExtent(*source, KeyQuery{"dbo_events", {"region", "at"}});
  EXPECT_EQ(events["kind"], "keyset");
  EXPECT_EQ(events["max"], source->LastKey(KeyQuery{"dbo_events", {"region", "at"}}));
  ASSERT_TRUE(events["max"].is_array());
  EXPECT_EQ(events["max"][0], "south");
  const auto prices = SnapshotExtent(*source, KeyQuery{"dbo_prices", {"p"}});
  EXPECT_EQ(prices["kind"], "keyset");
  EXPECT_FALSE(prices["max"].is_array());
  EXPECT_EQ(prices["max"], source->LastKey(KeyQuery{"dbo_prices", {"p"}}));
}

TEST_P(KeyRangesTest, IntegerKeySlicesAreCountedInOneGroupBy) {
  auto source = Open();
  const KeyQuery key{"dbo_numbers", {}};
  // The keys are -10, -7, ..., 56: slices of 9 from -10 hold three keys each, the last two.
  const auto slices = source->CountKeySlices(key, -10, 9, 8);
  std::vector<std::pair<std::int64_t, std::int64_t>> got;
  for (const auto& slice : slices) got.emplace_back(slice.slice, slice.rows);
  EXPECT_EQ(got, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                     {0, 3}, {1, 3}, {2, 3}, {3, 3}, {4, 3}, {5, 3}, {6, 3}, {7, 2}}));
  // And their keys summed, as decimal(38,0): -10 - 7 - 4, and 53 + 56.
  EXPECT_EQ(Int128Text(slices.front().key_sum), "-21");
  EXPECT_EQ(Int128Text(slices.back().key_sum), "109");
  // Empty slices are left out; keys outside the grid are not counted.
  const auto sparse = source->CountKeySlices(key, 0, 1, 10);
  std::vector<std::int64_t> at;
  for (const auto& slice : sparse) at.push_back(slice.slice);
  EXPECT_EQ(at, (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_THROW(source->CountKeySlices(KeyQuery{"dbo_events", {}}, 0, 1, 1), ConfigError);
  EXPECT_THROW(source->CountKeySlices(key, 0, 0, 1), ConfigError);
  EXPECT_THROW(source->CountKeySlices(key, INT64_MAX - 5, 10, 1), ConfigError);
}

TEST_P(KeyRangesTest, CompositeTextAndDatetimeKeyTilesInRanges) {
  auto source = Open();
  const KeyQuery key{"dbo_events", {}};
  const auto first = source->KeyAt(key, nullptr, 0);
  ASSERT_TRUE(first && first->is_array() && first->size() == 2) << (first ? first->dump() : "none");
  EXPECT_EQ((*first)[0], "east");
  const auto last = source->LastKey(key);
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)[0], "south");
  // A bound read back seeks to itself: the datetime2(7) part keeps its seven digits.
  EXPECT_EQ(source->KeyAt(key, *last, 0), last);
  EXPECT_EQ(source->KeyAt(key, *last, 1), std::nullopt);
  ExpectSeeksTile(*source, "dbo_events", 4);
  ExpectSeeksTile(*source, "dbo_events", 1);
}

TEST_P(KeyRangesTest, BinaryAndDecimalKeysTileInRanges) {
  auto source = Open();
  EXPECT_EQ(source->KeyAt(KeyQuery{"dbo_blobs", {}}, nullptr, 0),
            json("0x" + std::string("E978")));  // 255 - 22, then 'x'
  ExpectSeeksTile(*source, "dbo_blobs", 6);
  ExpectSeeksTile(*source, "dbo_prices", 7);
}

TEST_P(KeyRangesTest, AFloatKeyReadsWholeAndRefusesRanges) {
  auto source = Open();
  std::multiset<std::int64_t> seen;
  EXPECT_EQ(Count(*source, "dbo_readings", nullptr, nullptr, &seen), kRows);
  EXPECT_THROW(source->KeyAt(KeyQuery{"dbo_readings", {}}, nullptr, 0), ConfigError);
  EXPECT_THROW(Count(*source, "dbo_readings", 1, nullptr, &seen), ConfigError);
}

TEST_P(KeyRangesTest, BoundsThatDoNotFitTheKeyAreRefusedBeforeReading) {
  auto source = Open();
  EXPECT_THROW(source->KeyAt(KeyQuery{"dbo_events", {}}, "north", 0), ConfigError);
  EXPECT_THROW(source->KeyAt(KeyQuery{"dbo_numbers", {}}, json::array({1, 2}), 0), ConfigError);
  EXPECT_THROW(source->KeyAt(KeyQuery{"dbo_numbers", {}}, nullptr, -1), ConfigError);
  try {
    source->KeyAt(KeyQuery{"dbo_numbers", {"nope"}}, nullptr, 0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("key column 'nope' is not a column of table dbo.numbers"));
  }
}

TEST_P(KeyRangesTest, TableColumnsAreTheSourceTablesColumnsNow) {
  auto source = Open();
  EXPECT_EQ(source->TableColumns("DBO_EVENTS"), (std::vector<std::string>{"region", "at", "v"}));
  EXPECT_THROW(source->TableColumns("dbo_nope"), NotFoundError);
}

INSTANTIATE_TEST_SUITE_P(Backends, KeyRangesTest, ::testing::Values("sim", "odbc"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mssql_cdc
