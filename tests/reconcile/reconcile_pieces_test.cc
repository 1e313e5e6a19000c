// Tier 2 of reconcile reads a bucket a piece at a time, so that a bucket of any size compares in
// bounded memory: a 5,000-row table in one bucket, compared under a 1 MiB budget, is read in
// pieces of about 1,000 rows from both sides, and the differences in different pieces (a row
// missing from silver, a changed row, an extra one) are all found. Also how SplitBucket cuts.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "delta/table.h"
#include "engine/finalization.h"
#include "reconcile/key_grid.h"
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

class ReconcilePiecesTest : public StreamTest {};

TEST_F(ReconcilePiecesTest, ABucketIsComparedAPieceAtATimeAndEveryDifferenceIsFound) {
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
  silver_options.keys = {"id"};
  silver_options.capture_instances = {std::string(kInstance)};
  ApplyChanges(silver_options);

  // Silver tampered with: id 150 gone, id 2,600's name changed, id 9,000 added.
  auto silver = delta::DeltaTable::Open(dir_.File("silver"));
  silver.RewriteFiles(silver.state().schema(), [&](const delta::TableState& snapshot,
                                                   const std::shared_ptr<arrow::Schema>& schema) {
    delta::DeltaTable::Rewrite rewrite;
    for (const auto& [path, add] : snapshot.files) rewrite.remove.push_back(add);
    auto rows = silver.ReadFiles(rewrite.remove, schema)->CombineChunksToBatch().ValueOrDie();
    const auto ids = arrow::compute::Cast(*rows->GetColumnByName("id"), arrow::int64()).ValueOrDie();
    const auto& id_values = static_cast<const arrow::Int64Array&>(*ids);
    const auto names = std::static_pointer_cast<arrow::StringArray>(rows->GetColumnByName("name"));
    arrow::BooleanBuilder keep;
    arrow::StringBuilder new_names;
    std::int64_t copied = -1;
    for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
      EXPECT_TRUE(keep.Append(id_values.Value(i) != 150).ok());
      EXPECT_TRUE(new_names.Append(id_values.Value(i) == 2'600 ? std::string("tampered") : names->GetString(i)).ok());
      if (id_values.Value(i) == 4'999) copied = i;
    }
    const int name_column = rows->schema()->GetFieldIndex("name");
    rows = rows->SetColumn(name_column, rows->schema()->field(name_column), new_names.Finish().ValueOrDie()).ValueOrDie();
    arrow::Int64Builder extra_id;
    EXPECT_TRUE(extra_id.Append(9'000).ok());
    const int id_column = rows->schema()->GetFieldIndex("id");
    auto extra = rows->Slice(copied, 1);
    extra = extra->SetColumn(id_column, rows->schema()->field(id_column),
                             arrow::compute::Cast(*extra_id.Finish().ValueOrDie(), rows->schema()->field(id_column)->type())
                                 .ValueOrDie()).ValueOrDie();
    rewrite.rows.push_back(arrow::compute::Filter(rows, keep.Finish().ValueOrDie()).ValueOrDie().record_batch());
    rewrite.rows.push_back(extra);
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
  ReconcileOptions options;
  options.capture_instance = kInstance;
  options.keys = {"id"};
  options.sample = 0;
  options.memory_budget = 1 << 20;  // pieces of 1,000 rows, the least
  CountingLakeSide lake(std::move(silver_table), std::move(bronze_table), std::nullopt);
  auto source = MakeSourceFactory(config.source)();
  const ReconcileResult result = Reconcile(options, state, *source, lake);

  EXPECT_EQ(result.buckets, 1);
  EXPECT_EQ(result.mismatch, 1);
  EXPECT_EQ(result.failures.at("MISSING_TARGET"), 1);
  EXPECT_EQ(result.failures.at("RECORD_DIFF"), 1);
  EXPECT_EQ(result.failures.at("MISSING_SOURCE"), 1);
  std::set<std::string> keys;
  for (const auto& row : result.report) {
    if (row.key) keys.insert(*row.failure_type + " " + *row.key);
  }
  EXPECT_EQ(keys, (std::set<std::string>{"MISSING_SOURCE {\"id\":9000}", "MISSING_TARGET {\"id\":150}",
                                         "RECORD_DIFF {\"id\":2600}"}));
  ASSERT_GE(lake.piece_rows.size(), 4u) << "5,000 rows in pieces of about 1,000";
  EXPECT_LE(*std::max_element(lake.piece_rows.begin(), lake.piece_rows.end()), 1'100);
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
