// The silver rebuild in bounded memory against the in-memory rule it must equal: bronze rows
// of many images per key, updates, deletes, re-inserts and a NULL key, given in random order to
// a rebuild whose budget makes it spill many runs and merge them in more than one pass; silver
// must hold exactly the upserts LatestImagesOf gives, each file in key order, the files' key
// ranges apart. Also the byte order of sortable keys, a second write of the same rebuild, and a
// spill directory that cannot be made.
#include "silver/spilled_rebuild.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "core/errors.h"
#include "delta/data_file_stream.h"
#include "delta/table.h"
#include "silver/latest_images.h"
#include "silver/silver_merge.h"
#include "silver/sortable_keys.h"
#include "tests/silver/bronze_rows.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using silver_testing::BronzeRow;
using silver_testing::BronzeRows;
using silver_testing::kBronzeSchema;
using silver_testing::Silver;
using testing::TempDir;

using Image = std::pair<std::optional<int>, std::optional<std::string>>;  // (id, name)

std::vector<BronzeRow> ManyImages(int keys, int changes, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<BronzeRow> rows;
  // A snapshot at LSN 10 of every key but the NULL one, then changes at later LSNs.
  for (int id = 0; id < keys; ++id) {
    BronzeRow row;
    row.lsn = 10;
    row.operation = 0;
    row.snapshot = true;
    row.id = id;
    row.name = "snapshot " + std::to_string(id);
    rows.push_back(row);
  }
  for (int c = 0; c < changes; ++c) {
    const int lsn = 11 + c / 3;  // a few changes share one commit
    std::optional<int> id = random() % 50 == 0 ? std::nullopt : std::optional<int>(static_cast<int>(random() % (keys + keys / 10)));
    const int kind = static_cast<int>(random() % 4);
    BronzeRow row;
    row.lsn = lsn;
    row.seqval = c;
    row.command_id = c % 3;
    row.id = id;
    row.name = "change " + std::to_string(c);
    if (kind == 0) {
      row.operation = 1;
    } else if (kind == 1) {
      row.operation = 2;
    } else {
      BronzeRow before = row;
      before.operation = 3;
      rows.push_back(before);
      row.operation = 4;
    }
    rows.push_back(row);
  }
  std::shuffle(rows.begin(), rows.end(), random);
  return rows;
}

std::vector<Image> Upserts(const std::shared_ptr<arrow::Table>& rows, const std::vector<bool>* deletes) {
  std::vector<Image> out;
  const auto table = rows->CombineChunksToBatch().ValueOrDie();
  const auto ids = std::static_pointer_cast<arrow::Int32Array>(table->GetColumnByName("id"));
  const auto names = std::static_pointer_cast<arrow::StringArray>(table->GetColumnByName("name"));
  for (std::int64_t i = 0; i < table->num_rows(); ++i) {
    if (deletes && (*deletes)[static_cast<std::size_t>(i)]) continue;
    out.emplace_back(ids->IsNull(i) ? std::nullopt : std::optional(ids->Value(i)),
                     names->IsNull(i) ? std::nullopt : std::optional(names->GetString(i)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// 1 MiB: runs of half a MiB (about 5,000 of ManyImages' rows each), merged 4 at a time.
RebuildBudget SmallBudget(const TempDir& dir) { return RebuildBudget{1 << 20, dir.path()}; }

// `bronze` added in batches of 500 rows, then written to a new silver table under `dir`.
SilverMergeResult RebuildInto(const TempDir& dir, SpilledRebuild& rebuild, const arrow::Table& bronze) {
  auto silver = delta::DeltaTable::Create(dir.path() + "/silver", {Silver()});
  arrow::TableBatchReader reader(bronze);
  reader.set_chunksize(500);
  for (std::shared_ptr<arrow::RecordBatch> batch; reader.ReadNext(&batch).ok() && batch;) rebuild.Add(*batch);
  return RebuildSilver(silver, rebuild, Silver(), SmallBudget(dir).memory_bytes);
}

TEST(SpilledRebuildTest, SilverHoldsTheLatestUpsertOfEveryKeyThoughRunsWereSpilledAndMergedTwice) {
  TempDir dir;
  const auto bronze = BronzeRows(ManyImages(20'000, 30'000, 7));
  const auto images = LatestImagesOf(bronze, {"id"}, Silver());
  const auto expected = Upserts(images.rows, &images.deletes);
  std::int64_t expected_deletes = 0;
  for (bool d : images.deletes) expected_deletes += d ? 1 : 0;

  SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), SmallBudget(dir));
  const auto merged = RebuildInto(dir, rebuild, *bronze);
  EXPECT_GT(rebuild.runs_spilled(), 8) << "the budget should have spilled runs and merged some first";
  EXPECT_GT(rebuild.spilled_bytes(), 0);
  EXPECT_EQ(rebuild.rows_added(), bronze->num_rows());

  EXPECT_EQ(merged.upserted, static_cast<std::int64_t>(expected.size()));
  EXPECT_EQ(merged.deleted, expected_deletes);
  auto read = delta::DeltaTable::Open(dir.path() + "/silver");
  EXPECT_EQ(Upserts(read.Read(), nullptr), expected);

  // Each file in key order (NULL last), and no two files' key ranges overlap.
  std::vector<std::pair<int, int>> ranges;
  for (const auto& [path, add] : read.state().files) {
    const auto rows = read.ReadFiles({add})->CombineChunksToBatch().ValueOrDie();
    const auto ids = std::static_pointer_cast<arrow::Int32Array>(rows->GetColumnByName("id"));
    std::optional<int> last;
    for (std::int64_t i = 0; i < ids->length(); ++i) {
      if (ids->IsNull(i)) {
        EXPECT_EQ(i, ids->length() - 1) << "a NULL key sorts last";
        continue;
      }
      if (last) EXPECT_LT(*last, ids->Value(i)) << path;
      last = ids->Value(i);
    }
    if (ids->length() > ids->null_count()) ranges.emplace_back(ids->Value(0), *last);
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t r = 1; r < ranges.size(); ++r) EXPECT_LT(ranges[r - 1].second, ranges[r].first);
}

// ManyImages' rows in key order (NULL last), cut into blocks of `block` rows that are then
// shuffled: each block sorted, as a bronze file of a snapshot is, the files in any order.
std::vector<BronzeRow> SortedBlocks(std::size_t block, unsigned seed) {
  auto rows = ManyImages(20'000, 30'000, seed);
  std::stable_sort(rows.begin(), rows.end(), [](const BronzeRow& a, const BronzeRow& b) {
    return std::make_pair(!a.id.has_value(), a.id.value_or(0)) < std::make_pair(!b.id.has_value(), b.id.value_or(0));
  });
  std::vector<std::vector<BronzeRow>> blocks;
  for (std::size_t at = 0; at < rows.size(); at += block) {
    blocks.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(at),
                        rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), at + block)));
  }
  std::mt19937 random(seed);
  std::shuffle(blocks.begin(), blocks.end(), random);
  std::vector<BronzeRow> out;
  for (const auto& b : blocks) out.insert(out.end(), b.begin(), b.end());
  return out;
}

class KeyOrderedRebuildTest : public ::testing::TestWithParam<std::size_t> {};

TEST_P(KeyOrderedRebuildTest, RowsInSortedStretchesGiveTheSameSilverAsShuffledOnes) {
  // Rows that arrive in key order need no sort (a run of several sorted stretches is merged)
  // and runs that hold ranges of keys merge without the heap; a key's images still straddle
  // the stretches' and runs' ends.
  TempDir dir;
  const auto bronze = BronzeRows(SortedBlocks(GetParam(), 11));
  const auto images = LatestImagesOf(bronze, {"id"}, Silver());
  const auto expected = Upserts(images.rows, &images.deletes);

  SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), SmallBudget(dir));
  const auto merged = RebuildInto(dir, rebuild, *bronze);
  EXPECT_GT(rebuild.runs_spilled(), 8);
  EXPECT_EQ(merged.upserted, static_cast<std::int64_t>(expected.size()));
  EXPECT_EQ(Upserts(delta::DeltaTable::Open(dir.path() + "/silver").Read(), nullptr), expected);
}

// All rows in one stretch; runs of about 5,000 rows made of 5 stretches, and of 50.
INSTANTIATE_TEST_SUITE_P(Stretches, KeyOrderedRebuildTest, ::testing::Values(1u << 30, 1'000u, 100u));

TEST(SpilledRebuildTest, TheSpillDirectoryGoesWithTheRebuild) {
  TempDir dir;
  const auto bronze = BronzeRows(ManyImages(5'000, 5'000, 3));
  {
    SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), RebuildBudget{1 << 20, dir.path()});
    arrow::TableBatchReader reader(*bronze);
    for (std::shared_ptr<arrow::RecordBatch> batch; reader.ReadNext(&batch).ok() && batch;) rebuild.Add(*batch);
    EXPECT_GT(rebuild.runs_spilled(), 0);
    EXPECT_FALSE(std::filesystem::is_empty(dir.path()));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SpilledRebuildTest, AWriteRetriedGivesTheSameRows) {
  TempDir dir;
  const auto bronze = BronzeRows(ManyImages(5'000, 8'000, 11));
  const auto images = LatestImagesOf(bronze, {"id"}, Silver());
  const auto expected = Upserts(images.rows, &images.deletes);
  auto silver = delta::DeltaTable::Create(dir.path() + "/silver", {Silver()});
  SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), RebuildBudget{1 << 20, dir.path()});
  arrow::TableBatchReader reader(*bronze);
  for (std::shared_ptr<arrow::RecordBatch> batch; reader.ReadNext(&batch).ok() && batch;) rebuild.Add(*batch);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto merged = RebuildSilver(silver, rebuild, Silver(), 1 << 20);
    EXPECT_EQ(merged.upserted, static_cast<std::int64_t>(expected.size()));
    EXPECT_EQ(Upserts(delta::DeltaTable::Open(dir.path() + "/silver").Read(), nullptr), expected);
  }
}

TEST(SpilledRebuildTest, RowsThatFitStayInMemory) {
  TempDir dir;
  const auto bronze = BronzeRows(ManyImages(1'000, 1'000, 5));
  const auto images = LatestImagesOf(bronze, {"id"}, Silver());
  auto silver = delta::DeltaTable::Create(dir.path() + "/silver", {Silver()});
  SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), RebuildBudget{256 << 20, dir.path()});
  rebuild.Add(*bronze->CombineChunksToBatch().ValueOrDie());
  RebuildSilver(silver, rebuild, Silver(), 256 << 20);
  EXPECT_EQ(rebuild.runs_spilled(), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() + "/silver/_delta_log") == false);
  EXPECT_EQ(Upserts(delta::DeltaTable::Open(dir.path() + "/silver").Read(), nullptr), Upserts(images.rows, &images.deletes));
}

TEST(SpilledRebuildTest, ASpillDirectoryThatCannotBeMadeIsAConfigErrorNamingIt) {
  TempDir dir;
  const auto bronze = BronzeRows(ManyImages(5'000, 5'000, 3));
  SpilledRebuild rebuild({"id"}, *kBronzeSchema(), Silver(), RebuildBudget{1 << 20, dir.path() + "/missing/deeper"});
  arrow::TableBatchReader reader(*bronze);
  try {
    for (std::shared_ptr<arrow::RecordBatch> batch; reader.ReadNext(&batch).ok() && batch;) rebuild.Add(*batch);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find(dir.path() + "/missing/deeper"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("spill_directory"), std::string::npos) << error.what();
  }
}

TEST(SpilledRebuildTest, ABudgetUnderOneMebibyteIsRefused) {
  EXPECT_THROW(SpilledRebuild({"id"}, *kBronzeSchema(), Silver(), RebuildBudget{512 << 10, ""}), ConfigError);
}

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Built(const std::vector<std::optional<T>>& values) {
  Builder builder;
  for (const auto& value : values) {
    if (value) {
      EXPECT_TRUE(builder.Append(*value).ok());
    } else {
      EXPECT_TRUE(builder.AppendNull().ok());
    }
  }
  return builder.Finish().ValueOrDie();
}

// The byte order of sortable keys is the values' order, NULL last, per column in turn.
TEST(SortableKeysTest, ByteOrderIsTheValuesOrder) {
  const std::optional<std::int64_t> no_int;
  auto ints = Built<arrow::Int64Builder>(std::vector<std::optional<std::int64_t>>{
      5, -3, no_int, 0, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), -1});
  auto texts = Built<arrow::StringBuilder>(std::vector<std::optional<std::string>>{
      "b", "a", "ab", "", "a", std::nullopt, std::string("a\0", 2)});
  auto doubles = Built<arrow::DoubleBuilder>(std::vector<std::optional<double>>{1.5, -2.5, 0.0, -0.5, 1e300, -1e300, std::nullopt});
  arrow::Decimal128Builder decimal_builder(arrow::decimal128(10, 2));
  for (const char* text : {"1.50", "-2.50", "0.00", "-0.01", "99999999.99", "-99999999.99"}) {
    ASSERT_TRUE(decimal_builder.Append(arrow::Decimal128::FromString(text).ValueOrDie()).ok());
  }
  ASSERT_TRUE(decimal_builder.AppendNull().ok());
  auto decimals = decimal_builder.Finish().ValueOrDie();
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("i", arrow::int64()), arrow::field("t", arrow::utf8()),
                     arrow::field("d", arrow::float64()), arrow::field("m", arrow::decimal128(10, 2))}),
      7, {ints, texts, doubles, decimals});
  auto order_of = [&](const std::string& column) {
    const auto keys = SortableKeys(*batch, {column});
    std::vector<int> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
    return order;
  };
  EXPECT_EQ(order_of("i"), (std::vector<int>{4, 1, 6, 3, 0, 5, 2}));
  EXPECT_EQ(order_of("t"), (std::vector<int>{3, 1, 4, 6, 2, 0, 5}));
  EXPECT_EQ(order_of("d"), (std::vector<int>{5, 1, 3, 2, 0, 4, 6}));
  EXPECT_EQ(order_of("m"), (std::vector<int>{5, 1, 3, 2, 0, 4, 6}));
  // Two columns: equal first columns ("a" twice) are ordered by the second; equal keys are
  // equal bytes.
  const auto both = SortableKeys(*batch, {"t", "i"});
  EXPECT_LT(both[4], both[1]);  // ("a", min int64) before ("a", -3)
  const auto texts_only = SortableKeys(*batch, {"t"});
  EXPECT_EQ(texts_only[1], texts_only[4]);
  EXPECT_NE(texts_only[1], texts_only[6]);  // "a" and "a\0" differ
}

}  // namespace
}  // namespace mssql_cdc
