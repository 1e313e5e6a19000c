// Tier 2 of reconcile reads a bucket a piece at a time, so that a bucket of any size compares in
// bounded memory: a 5,000-row table in one bucket, compared under a 1 MiB budget, is read in
// pieces of about 1,000 rows from both sides (key ranges of an integer key, parts split by a
// hash of a text key), and the differences in different pieces (a row missing from silver, a
// changed row, an extra one) are all found. Also how SplitBucket cuts and KeyPartitions splits.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "delta/table.h"
#include "engine/finalization.h"
#include "reconcile/key_grid.h"
#include "reconcile/key_partitions.h"
#include "reconcile/lake_side.h"
#include "reconcile/reconcile.h"
#include "silver/apply_changes.h"
#include "source/open_source.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::StreamTest;

// DeltaLakeSide, counting the rows of each RowsBetween it answers.
class CountingLakeSide : public DeltaLakeSide {
 public:
  using DeltaLakeSide::DeltaLakeSide;
  std::shared_ptr<arrow::Table> RowsBetween(const std::string& key, KeyUnit unit, std::optional<std::int64_t> lo,
                                            std::optional<std::int64_t> hi) override {
    auto rows = DeltaLakeSide::RowsBetween(key, unit, lo, hi);
    piece_rows.push_back(rows->num_rows());
    return rows;
  }
  std::vector<std::int64_t> piece_rows;
};

class ReconcilePiecesTest : public StreamTest {
 protected:
  // 5,000 rows streamed into bronze and applied to silver keyed by `keys`, then silver tampered
  // with: item 150 gone, item 2,600's qty changed, `extra` items from 9,000 on added.
  LakeState TamperedSilver(const std::vector<std::string>& keys, int extra = 1) {
    Insert(1, 5'000);
    auto config = Config();
    config.params.bootstrap = true;
    config.control_table = dir_.File("control");
    RunOnce(config);
    ApplyChangesOptions silver_options;
    silver_options.bronze = dir_.File("bronze");
    silver_options.silver = dir_.File("silver");
    silver_options.control = dir_.File("control");
    silver_options.facts = dir_.File("facts");
    silver_options.keys = keys;
    silver_options.capture_instances = {std::string(kInstance)};
    ApplyChanges(silver_options);

    auto silver = delta::DeltaTable::Open(dir_.File("silver"));
    silver.RewriteFiles(silver.state().schema(), [&](const delta::TableState& snapshot,
                                                     const std::shared_ptr<arrow::Schema>& schema) {
      delta::DeltaTable::Rewrite rewrite;
      for (const auto& [path, add] : snapshot.files) rewrite.remove.push_back(add);
      auto rows = silver.ReadFiles(rewrite.remove, schema)->CombineChunksToBatch().ValueOrDie();
      const auto ids = arrow::compute::Cast(*rows->GetColumnByName("id"), arrow::int64()).ValueOrDie();
      const auto& id_values = static_cast<const arrow::Int64Array&>(*ids);
      const auto qtys = arrow::compute::Cast(*rows->GetColumnByName("qty"), arrow::int64()).ValueOrDie();
      const auto& qty_values = static_cast<const arrow::Int64Array&>(*qtys);
      arrow::BooleanBuilder keep;
      arrow::Int64Builder new_qtys;
      std::int64_t copied = -1;
      for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
        EXPECT_TRUE(keep.Append(id_values.Value(i) != 150).ok());
        EXPECT_TRUE(new_qtys.Append(id_values.Value(i) == 2'600 ? 99 : qty_values.Value(i)).ok());
        if (id_values.Value(i) == 4'999) copied = i;
      }
      auto set = [&](std::shared_ptr<arrow::RecordBatch> batch, const std::string& name,
                     const std::shared_ptr<arrow::Array>& values) {
        const int column = batch->schema()->GetFieldIndex(name);
        const auto field = batch->schema()->field(column);
        return batch->SetColumn(column, field, arrow::compute::Cast(*values, field->type()).ValueOrDie()).ValueOrDie();
      };
      rows = set(rows, "qty", new_qtys.Finish().ValueOrDie());
      rewrite.rows.push_back(arrow::compute::Filter(rows, keep.Finish().ValueOrDie()).ValueOrDie().record_batch());
      for (int e = 0; e < extra; ++e) {
        arrow::Int64Builder extra_id;
        arrow::StringBuilder extra_name;
        EXPECT_TRUE(extra_id.Append(9'000 + e).ok());
        EXPECT_TRUE(extra_name.Append("item " + std::to_string(9'000 + e)).ok());
        auto added = set(rows->Slice(copied, 1), "id", extra_id.Finish().ValueOrDie());
        rewrite.rows.push_back(set(added, "name", extra_name.Finish().ValueOrDie()));
      }
      return rewrite;
    }, {});

    LakeState state;
    state.silver_name = dir_.File("silver");
    state.silver_lsn = SilverCurrentTo(ReadSilverPosition(dir_.File("control"), dir_.File("silver")));
    auto silver_table = delta::DeltaTable::Open(dir_.File("silver"));
    auto bronze_table = delta::DeltaTable::Open(dir_.File("bronze"));
    state.silver_schema = silver_table.state().schema();
    state.silver_properties = silver_table.state().metadata.configuration;
    state.silver_version = silver_table.state().version;
    state.bronze_name = dir_.File("bronze");
    state.bronze_schema = bronze_table.state().schema();
    state.bronze_id = bronze_table.state().metadata.id;
    return state;
  }

  CountingLakeSide Lake() {
    return CountingLakeSide(delta::DeltaTable::Open(dir_.File("silver")), delta::DeltaTable::Open(dir_.File("bronze")),
                            std::nullopt);
  }

  // Reconcile of the tampered silver by `keys`, with a spill directory of the test's own.
  ReconcileResult Run(const LakeState& state, const std::vector<std::string>& keys, double sample,
                      std::int64_t memory_budget, std::int64_t bucket_rows = 1'000'000) {
    ReconcileOptions options;
    options.capture_instance = kInstance;
    options.keys = keys;
    options.sample = sample;
    options.bucket_rows = bucket_rows;
    options.memory_budget = memory_budget;
    options.spill_directory = dir_.File("spill");
    std::filesystem::create_directories(options.spill_directory);
    CountingLakeSide lake = Lake();
    auto source = MakeSourceFactory(Config().source)();
    ReconcileResult result = Reconcile(options, state, *source, lake);
    EXPECT_TRUE(std::filesystem::is_empty(options.spill_directory)) << "the spill files go with the run";
    return result;
  }

  static std::set<std::string> FailedKeys(const ReconcileResult& result) {
    std::set<std::string> keys;
    for (const auto& row : result.report) {
      if (row.key) keys.insert(*row.failure_type + " " + *row.key);
    }
    return keys;
  }
};

TEST_F(ReconcilePiecesTest, ABucketIsComparedAPieceAtATimeAndEveryDifferenceIsFound) {
  const LakeState state = TamperedSilver({"id"});
  ReconcileOptions options;
  options.capture_instance = kInstance;
  options.keys = {"id"};
  options.sample = 0;
  options.memory_budget = 1 << 20;  // pieces of 1,000 rows, the least
  CountingLakeSide lake = Lake();
  auto source = MakeSourceFactory(Config().source)();
  const ReconcileResult result = Reconcile(options, state, *source, lake);

  EXPECT_EQ(result.buckets, 1);
  EXPECT_EQ(result.mismatch, 1);
  EXPECT_EQ(result.failures.at("MISSING_TARGET"), 1);
  EXPECT_EQ(result.failures.at("RECORD_DIFF"), 1);
  EXPECT_EQ(result.failures.at("MISSING_SOURCE"), 1);
  EXPECT_EQ(FailedKeys(result), (std::set<std::string>{"MISSING_SOURCE {\"id\":9000}", "MISSING_TARGET {\"id\":150}",
                                                       "RECORD_DIFF {\"id\":2600}"}));
  ASSERT_GE(lake.piece_rows.size(), 4u) << "5,000 rows in pieces of about 1,000";
  EXPECT_LE(*std::max_element(lake.piece_rows.begin(), lake.piece_rows.end()), 1'100);
  EXPECT_EQ(result.parts, 0) << "an integer key is read in key ranges, not split by hash";
}

// A text key has no grid: the whole table is one bucket (here 5,001 rows against 5,000, so it
// differs), split by a hash of the key into parts spilled to disk, each compared on its own; the
// same differences are found as when it is held whole.
TEST_F(ReconcilePiecesTest, AKeyWithoutAGridIsComparedPartByPartFromDisk) {
  const LakeState state = TamperedSilver({"name"}, 2);
  const std::set<std::string> expected{"MISSING_SOURCE {\"name\":\"item 9000\"}",
                                       "MISSING_SOURCE {\"name\":\"item 9001\"}",
                                       "MISSING_TARGET {\"name\":\"item 150\"}",
                                       "RECORD_DIFF {\"name\":\"item 2600\"}"};
  for (const std::int64_t budget : {std::int64_t{1} << 20, std::int64_t{1} << 30}) {
    SCOPED_TRACE("memory_budget " + std::to_string(budget));
    const ReconcileResult result = Run(state, {"name"}, 0, budget);
    EXPECT_EQ(result.buckets, 1);
    EXPECT_EQ(result.mismatch, 1);
    EXPECT_EQ(FailedKeys(result), expected);
    if (budget == std::int64_t{1} << 20) {
      EXPECT_GE(result.parts, 4) << "5,000 rows in parts of at most about 1,300";
      EXPECT_GT(result.spilled_bytes, 0);
    } else {
      EXPECT_EQ(result.parts, 1) << "held whole when it fits";
      EXPECT_EQ(result.spilled_bytes, 0);
    }
  }
}

// Counts that cancel out (one row gone, one added) leave the bucket MATCH; a sample of it is
// read from the source and silver's rows looked up by key, part by part: the missing and the
// changed rows are found, and the added one cannot be (a lookup by the source's keys).
TEST_F(ReconcilePiecesTest, ASampledRangeOfSuchAKeyLooksSilverUpPartByPart) {
  const LakeState state = TamperedSilver({"name"});
  // Buckets of 2,000 rows: three ranges, each read and split on its own.
  const ReconcileResult result = Run(state, {"name"}, 1, 1 << 20, 2'000);
  EXPECT_EQ(result.buckets, 1);
  EXPECT_EQ(result.hashed, 1);
  EXPECT_GE(result.parts, 4);
  EXPECT_EQ(FailedKeys(result), (std::set<std::string>{"MISSING_TARGET {\"name\":\"item 150\"}",
                                                       "RECORD_DIFF {\"name\":\"item 2600\"}"}));
}

// Every row lands in exactly one part, a key's rows on both sides in the same one, and no part
// holds far more than its share.
TEST(KeyPartitionsTest, EqualKeysShareAPartAndThePartsAreEven) {
  testing::TempDir dir;
  SpillDirectory spill(dir.path());
  auto rows_of = [](std::int64_t from, std::int64_t to) {
    arrow::StringBuilder names;
    arrow::Int64Builder values;
    for (std::int64_t i = from; i < to; ++i) {
      EXPECT_TRUE(names.Append("key " + std::to_string(i)).ok());
      EXPECT_TRUE(values.Append(i).ok());
    }
    auto schema = arrow::schema({arrow::field("k", arrow::utf8()), arrow::field("v", arrow::int64())});
    return arrow::RecordBatch::Make(schema, to - from, {names.Finish().ValueOrDie(), values.Finish().ValueOrDie()});
  };
  const int parts = PartsFor(20'000, 2'000);
  EXPECT_EQ(parts, 13);
  EXPECT_EQ(PartsFor(2'000, 2'000), 1);
  KeyPartitions left(&spill, {"k"}, parts), right(&spill, {"k"}, parts);
  for (std::int64_t from = 0; from < 20'000; from += 3'000) left.Add(*rows_of(from, std::min<std::int64_t>(from + 3'000, 20'000)));
  right.Add(*rows_of(19'000, 21'000));  // 1,000 keys shared with the left
  EXPECT_GT(left.Finish(), 0);
  right.Finish();
  std::int64_t total = 0, shared = 0;
  for (int p = 0; p < parts; ++p) {
    const auto part = left.Part(p);
    EXPECT_EQ(part->num_rows(), left.rows_in(p));
    EXPECT_LE(part->num_rows(), 2'000) << "part " << p;
    total += part->num_rows();
    std::set<std::string> keys;
    const auto names_of_part = part->GetColumnByName("k");
    for (const auto& chunk : names_of_part->chunks()) {
      const auto& names = static_cast<const arrow::StringArray&>(*chunk);
      for (std::int64_t i = 0; i < names.length(); ++i) keys.insert(names.GetString(i));
    }
    const auto twins = right.Part(p)->GetColumnByName("k");
    for (const auto& chunk : twins->chunks()) {
      const auto& names = static_cast<const arrow::StringArray&>(*chunk);
      for (std::int64_t i = 0; i < names.length(); ++i) shared += keys.count(names.GetString(i));
    }
  }
  EXPECT_EQ(total, 20'000);
  EXPECT_EQ(shared, 1'000) << "each shared key met its twin in the same part";
}

TEST(SplitBucketTest, PiecesTileTheBucketAtSliceBounds) {
  const KeyGrid grid{0, 10, 100};  // keys 0..999, slices of 10
  SliceTallies source, lake;
  for (std::int64_t slice = 0; slice < 100; ++slice) {
    source[slice] = Tally{10, 0};
    if (slice != 42) lake[slice] = Tally{slice == 60 ? 40 : 10, 0};
  }
  Bucket bucket;
  bucket.lo = 200;
  bucket.hi = 800;
  bucket.first_slice = 20;
  bucket.last_slice = 79;
  const auto pieces = SplitBucket(bucket, grid, source, lake, 100);
  ASSERT_GE(pieces.size(), 5u);
  EXPECT_EQ(pieces.front().lo, 200);
  EXPECT_EQ(pieces.back().hi, 800);
  for (std::size_t p = 1; p < pieces.size(); ++p) {
    EXPECT_EQ(pieces[p - 1].hi, pieces[p].lo) << "pieces meet";
    EXPECT_EQ(*pieces[p].lo % 10, 0) << "at a slice bound";
  }
  for (const auto& piece : pieces) EXPECT_LE(std::max(piece.source.rows, piece.lake.rows), 100 + 40);
  std::int64_t rows = 0;
  for (const auto& piece : pieces) rows += piece.source.rows;
  EXPECT_EQ(rows, 600);
  // A piece size above the bucket's rows leaves it whole.
  const auto whole = SplitBucket(bucket, grid, source, lake, 1'000'000);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole.front().lo, 200);
  EXPECT_EQ(whole.front().hi, 800);
}

}  // namespace
}  // namespace mssql_cdc
