// apply_changes natively: a stream writes bronze from the simulator, apply_changes keeps
// silver, and silver must equal the source table; reruns change nothing; a newer snapshot
// rebuilds; only the files a batch's keys touch are rewritten; bad input writes nothing.
#include "silver/apply_changes.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/facts.h"
#include "engine/finalization.h"
#include "engine/table_schemas.h"
#include "snapshot/plans_table.h"
#include "silver/silver_merge.h"
#include "tests/silver/bronze_rows.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::StreamTest;

// Rows as "id|name|qty" text, ordered, for comparing silver with the source table.
std::set<std::string> SourceRows(sim::SimDatabase& db, const sim::TableName& table) {
  std::set<std::string> rows;
  for (const auto& row : db.Rows(table)) {
    auto text = [&](const char* column) {
      const auto& v = row.at(column);
      return v.is_null() ? std::string("NULL") : v.is_string() ? v.as_string() : std::to_string(v.as_int());
    };
    rows.insert(text("id") + "|" + text("name") + "|" + text("qty"));
  }
  return rows;
}

std::set<std::string> SilverRows(const std::string& silver) {
  auto table = delta::DeltaTable::Open(silver).Read();
  const auto ids = stream_testing::Int64Column(table, "id");
  const auto names = stream_testing::StringColumn(table, "name");
  const auto qty = stream_testing::Int64Column(table, "qty");
  std::set<std::string> rows;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    rows.insert(std::to_string(ids[i]) + "|" + names[i].value_or("NULL") + "|" +
                (qty[i] < 0 ? std::string("NULL") : std::to_string(qty[i])));
  }
  EXPECT_EQ(rows.size(), ids.size()) << "one row per key";
  return rows;
}

class ApplyChangesTest : public StreamTest {
 protected:
  StreamConfig Streamed(bool bootstrap) const {
    auto config = Config();
    config.params.bootstrap = bootstrap;
    config.control_table = dir_.File("control");
    return config;
  }

  ApplyChangesOptions Silver() const {
    ApplyChangesOptions options;
    options.bronze = dir_.File("bronze");
    options.silver = dir_.File("silver");
    options.control = dir_.File("control");
    options.facts = dir_.File("facts");
    options.keys = {"id"};
    options.capture_instances = {kInstance};
    return options;
  }
};

TEST_F(ApplyChangesTest, SilverEqualsTheTableAfterABootstrapAndEveryBatch) {
  Insert(1, 30);
  RunOnce(Streamed(/*bootstrap=*/true));
  auto first = ApplyChanges(Silver());
  EXPECT_TRUE(first.bronze_found);
  EXPECT_TRUE(first.rebuilt);
  EXPECT_EQ(first.upserted, 30);
  EXPECT_EQ(SilverRows(dir_.File("silver")), SourceRows(*db_, items_));

  Update(3, 100);
  Delete(4);
  Insert(31, 2);
  Update(31, 5);
  Delete(32);
  RunOnce(Streamed(false));
  auto second = ApplyChanges(Silver());
  EXPECT_FALSE(second.rebuilt);
  EXPECT_EQ(second.deleted, 1);  // key 4; key 32 never reached silver
  EXPECT_EQ(SilverRows(dir_.File("silver")), SourceRows(*db_, items_));

  // The position is after the last change; the verdict is bronze's.
  const auto position = ReadSilverPosition(dir_.File("control"), dir_.File("silver"));
  ASSERT_TRUE(position && position->applied_lsn);
  EXPECT_EQ(*position->applied_lsn, second.applied_lsn.value());
  const auto bronze_verdict = ReadVerdict(dir_.File("control"), dir_.File("bronze"));
  ASSERT_TRUE(bronze_verdict.has_value());
  ASSERT_TRUE(second.finalized_until.has_value());
  EXPECT_EQ(second.finalized_until->value, bronze_verdict->finalized_until.value);
}

TEST_F(ApplyChangesTest, ARebuildBiggerThanItsBudgetSpillsAndEqualsTheTable) {
  Insert(1, 20'000);
  RunOnce(Streamed(/*bootstrap=*/true));
  for (int id = 1; id <= 20'000; id += 97) Update(id, id % 7);
  for (int id = 50; id <= 20'000; id += 501) Delete(id);
  Insert(20'001, 300);
  RunOnce(Streamed(false));
  auto options = Silver();
  options.budget = {1 << 20, dir_.File("spill")};
  std::filesystem::create_directories(options.budget.spill_directory);
  const auto rebuilt = ApplyChanges(options);
  EXPECT_TRUE(rebuilt.rebuilt);
  EXPECT_GT(rebuilt.runs_spilled, 1) << "a 1 MiB budget cannot hold 20,000 rows";
  EXPECT_GT(rebuilt.spilled_bytes, 0);
  EXPECT_EQ(SilverRows(dir_.File("silver")), SourceRows(*db_, items_));
  EXPECT_EQ(rebuilt.upserted, static_cast<std::int64_t>(SourceRows(*db_, items_).size()));
  EXPECT_TRUE(std::filesystem::is_empty(options.budget.spill_directory)) << "runs are deleted after the rebuild";
}

TEST_F(ApplyChangesTest, ARerunChangesNothing) {
  Insert(1, 5);
  RunOnce(Streamed(true));
  ApplyChanges(Silver());
  Update(2, 9);
  RunOnce(Streamed(false));
  ApplyChanges(Silver());
  const auto version = delta::DeltaTable::Open(dir_.File("silver")).state().version;
  auto again = ApplyChanges(Silver());
  EXPECT_EQ(again.upserted, 0);
  EXPECT_EQ(again.bronze_rows, 0);
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("silver")).state().version, version);

  // A crash after the MERGE and before the position: the same rows again change nothing.
  auto control = dir_.File("control");
  auto position = ReadSilverPosition(control, dir_.File("silver"));
  auto rewound = *position;
  rewound.applied_lsn = std::string("0x00000000000000000000");
  rewound.snapshot_lsn = position->snapshot_lsn;
  WriteSilverPosition(control, dir_.File("silver"), position, rewound, std::nullopt);
  auto replay = ApplyChanges(Silver());
  EXPECT_FALSE(replay.rebuilt);
  EXPECT_EQ(replay.upserted, 0);
  EXPECT_GT(replay.unchanged, 0);
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("silver")).state().version, version);
  EXPECT_EQ(SilverRows(dir_.File("silver")), SourceRows(*db_, items_));
}

TEST_F(ApplyChangesTest, WithoutAFactsTableTheVerdictDoesNotMove) {
  Insert(1, 3);
  RunOnce(Streamed(true));
  auto options = Silver();
  options.facts.reset();
  auto result = ApplyChanges(options);
  EXPECT_FALSE(result.finalized_until.has_value());
  EXPECT_EQ(SilverRows(dir_.File("silver")), SourceRows(*db_, items_));
}

TEST_F(ApplyChangesTest, AMissingBronzeWritesNothing) {
  auto result = ApplyChanges(Silver());
  EXPECT_FALSE(result.bronze_found);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("silver")));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("control")));
}

TEST_F(ApplyChangesTest, BadInputIsRefusedBeforeAnythingIsWritten) {
  Insert(1, 3);
  RunOnce(Streamed(true));
  const auto control_version = delta::DeltaTable::Open(dir_.File("control")).state().version;
  auto expect_refused = [&](ApplyChangesOptions options, const std::string& says) {
    try {
      ApplyChanges(options);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(options.silver));
    EXPECT_EQ(delta::DeltaTable::Open(dir_.File("control")).state().version, control_version);
  };
  auto options = Silver();
  options.keys = {"nope"};
  expect_refused(options, "'nope' is not a captured column of bronze");
  options.keys = {"_start_lsn"};
  expect_refused(options, "is not a captured column");
  options.keys = {"id", "ID"};
  expect_refused(options, "given twice");
  options = Silver();
  options.capture_instances = {"dbo_other"};
  expect_refused(options, "holds rows of capture instance 'dbo_items'");
  options = Silver();
  options.silver = dir_.File("facts");
  try {
    ApplyChanges(options);
    ADD_FAILURE() << "a facts table taken for silver";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a silver table"), std::string::npos) << e.what();
  }
}

TEST_F(ApplyChangesTest, ASilverTableOfAnotherBronzeIsRefused) {
  Insert(1, 3);
  RunOnce(Streamed(true));
  ApplyChanges(Silver());
  // Another bronze of the same shape: a second stream's table.
  auto other = Config({}, "other");
  other.params.target = dir_.File("bronze2");
  other.params.checkpoint = dir_.File("checkpoint2");
  other.params.bootstrap = true;
  RunOnce(other);
  auto options = Silver();
  options.bronze = dir_.File("bronze2");
  const auto version = delta::DeltaTable::Open(dir_.File("silver")).state().version;
  try {
    ApplyChanges(options);
    ADD_FAILURE() << "silver of another bronze accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is kept from another bronze table"), std::string::npos) << e.what();
  }
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("silver")).state().version, version);
}

// Bronze written by hand, for snapshots and capture instances the simulator's stream would
// take longer to produce.
class HandWrittenBronzeTest : public ::testing::Test {
 protected:
  void Append(const std::vector<silver_testing::BronzeRow>& rows) {
    if (!delta::DeltaTable::Exists(Bronze())) {
      delta::DeltaTable::Create(Bronze(), BronzeTableOptions(
          OutputSchema({arrow::field("id", arrow::int32()), arrow::field("name", arrow::utf8())}, true),
          silver_testing::kInstance));
    }
    auto table = silver_testing::BronzeRows(rows);
    delta::DeltaTable::Open(Bronze()).Append({*table->CombineChunksToBatch()});
  }
  std::string Bronze() const { return dir_.File("bronze"); }
  ApplyChangesOptions Options() const {
    ApplyChangesOptions options;
    options.bronze = Bronze();
    options.silver = dir_.File("silver");
    options.control = dir_.File("control");
    options.keys = {"id"};
    options.capture_instances = {silver_testing::kInstance};
    return options;
  }
  std::set<std::string> Silver() const {
    auto table = delta::DeltaTable::Open(dir_.File("silver")).Read();
    const auto ids = stream_testing::Int64Column(table, "id");
    const auto names = stream_testing::StringColumn(table, "name");
    std::set<std::string> rows;
    for (std::size_t i = 0; i < ids.size(); ++i) rows.insert(std::to_string(ids[i]) + "=" + names[i].value_or("NULL"));
    return rows;
  }
  testing::TempDir dir_;
};

silver_testing::BronzeRow SnapshotRow(int lsn, int id, const std::string& name) {
  silver_testing::BronzeRow row{lsn, 0, 0, 0, id, name};
  row.snapshot = true;
  return row;
}

TEST_F(HandWrittenBronzeTest, ANewerSnapshotRebuildsSilverByAbsence) {
  Append({SnapshotRow(10, 1, "a"), SnapshotRow(10, 2, "b"), SnapshotRow(10, 3, "c")});
  Append({{12, 1, 1, 2, 4, "d"}, {13, 1, 1, 4, 1, "a2"}});
  EXPECT_TRUE(ApplyChanges(Options()).rebuilt);
  EXPECT_EQ(Silver(), (std::set<std::string>{"1=a2", "2=b", "3=c", "4=d"}));
  // A re-snapshot at 20 no longer has keys 2 and 4 (their deletes were lost); a change after it.
  Append({SnapshotRow(20, 1, "a2"), SnapshotRow(20, 3, "c")});
  Append({{21, 1, 1, 2, 5, "e"}});
  auto rebuilt = ApplyChanges(Options());
  EXPECT_TRUE(rebuilt.rebuilt);
  EXPECT_EQ(Silver(), (std::set<std::string>{"1=a2", "3=c", "5=e"}));
  EXPECT_EQ(ReadSilverPosition(dir_.File("control"), dir_.File("silver"))->snapshot_lsn,
            silver_testing::LsnText(20));
  // The same snapshot again is no rebuild.
  Append({{22, 1, 1, 1, 5, "e"}});
  auto next = ApplyChanges(Options());
  EXPECT_FALSE(next.rebuilt);
  EXPECT_EQ(Silver(), (std::set<std::string>{"1=a2", "3=c"}));
}

TEST_F(HandWrittenBronzeTest, AnOldImageNeverBringsADeletedRowBack) {
  Append({{1, 1, 1, 2, 1, "a"}, {2, 1, 1, 2, 2, "b"}});
  ApplyChanges(Options());
  Append({{3, 1, 1, 1, 1, "a"}});
  ApplyChanges(Options());
  EXPECT_EQ(Silver(), (std::set<std::string>{"2=b"}));
  // The position rewound below the insert of key 1: the insert is read again, with its delete.
  auto position = ReadSilverPosition(dir_.File("control"), dir_.File("silver"));
  auto rewound = *position;
  rewound.applied_lsn = silver_testing::LsnText(0);
  WriteSilverPosition(dir_.File("control"), dir_.File("silver"), position, rewound, std::nullopt);
  ApplyChanges(Options());
  EXPECT_EQ(Silver(), (std::set<std::string>{"2=b"}));
}

TEST_F(HandWrittenBronzeTest, ChunkRowsNeedTheFactsTable) {
  auto chunk_row = SnapshotRow(10, 1, "a");
  chunk_row.chunk = 0;
  Append({chunk_row});
  try {
    ApplyChanges(Options());
    ADD_FAILURE() << "chunk rows applied without facts";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("chunked snapshot; give the stream's facts table"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("silver")));
}

TEST_F(HandWrittenBronzeTest, OnlyTheFilesHoldingChangedKeysAreRewritten) {
  // Silver of four files with key ranges [0,100), [100,200), ...
  auto bronze_schema = silver_testing::kBronzeSchema();
  auto silver = delta::DeltaTable::Create(dir_.File("silver"), SilverTableOptions(*bronze_schema, "bronze", "id"));
  for (int file = 0; file < 4; ++file) {
    std::vector<silver_testing::BronzeRow> rows;
    for (int id = file * 100; id < file * 100 + 100; ++id) rows.push_back({1, id + 1, 1, 2, id, "v"});
    auto images = LatestImagesOf(silver_testing::BronzeRows(rows), {"id"}, SilverSchema(*bronze_schema));
    auto appended = MergeIntoSilver(silver, images, {"id"});
    EXPECT_EQ(appended.files_read, 0);
  }
  ASSERT_EQ(silver.state().files.size(), 4u);
  // An update of key 150 and a delete of key 160: one file read and rewritten.
  auto images = LatestImagesOf(silver_testing::BronzeRows({{5, 1, 1, 4, 150, "w"}, {5, 2, 1, 1, 160, "v"}}),
                               {"id"}, SilverSchema(*bronze_schema));
  auto merged = MergeIntoSilver(silver, images, {"id"});
  EXPECT_EQ(merged.files_read, 1);
  EXPECT_EQ(merged.upserted, 1);
  EXPECT_EQ(merged.deleted, 1);
  EXPECT_EQ(silver.state().files.size(), 4u);
  EXPECT_EQ(silver.Read()->num_rows(), 399);
  // New keys past every file's range read no file.
  auto inserts = LatestImagesOf(silver_testing::BronzeRows({{6, 1, 1, 2, 1000, "n"}}), {"id"}, SilverSchema(*bronze_schema));
  EXPECT_EQ(MergeIntoSilver(silver, inserts, {"id"}).files_read, 0);
}


// A chunked re-snapshot at S = 20 over a silver rebuilt from a snapshot at 10: keys deleted in a
// gap the stream never read leave silver with the wave whose chunk should hold them, not at
// completion; a change after a chunk's stamp outranks its range delete, one before it does not.
class ChunkedWavesTest : public HandWrittenBronzeTest {
 protected:
  static constexpr int kS = 20;
  void SetUp() override {
    std::vector<silver_testing::BronzeRow> rows;
    for (int id = 1; id <= 9; ++id) rows.push_back(SnapshotRow(10, id, "v" + std::to_string(id)));
    Append(rows);
    facts_ = dir_.File("facts");
    options_ = Options();
    options_.facts = facts_;
    ASSERT_TRUE(ApplyChanges(options_).rebuilt);
    // Opened at S, planned in three chunks: [., 4), [4, 7), [7, .).
    const Offset s{Lsn::Parse(silver_testing::LsnText(kS)), UtcMicros{1'700'000'000'000'000LL}};
    auto facts = OpenOrCreateTable(facts_, FactsTableOptions());
    ChunkPlan plan{"int", {"id"}, 3, {{0, nullptr, 4, 3}, {1, 4, 7, 3}, {2, 7, nullptr, 3}}};
    facts.Append({FactsToRecordBatch({ChunkedOpenFactsRow("app", Bronze(), s, {"resnapshot", 1}),
                                      SnapshotPlanFactsRow("app", Bronze(), s, "int", {"id"}, 3, 3,
                                                           ChunkPlanDigest(plan), PlansTableFor(Bronze()))})});
    OpenOrCreateTable(PlansTableFor(Bronze()), PlansTableOptions()).Append({PlanToEventRows(plan, s.lsn)});
  }
  // Wave `wave` of `chunks`, read at stamp `stamp`, holding `ids`.
  void Wave(int wave, const std::vector<int>& chunks, int stamp, const std::vector<std::pair<int, int>>& chunk_ids) {
    std::vector<silver_testing::BronzeRow> rows;
    for (const auto& [chunk, id] : chunk_ids) {
      auto row = SnapshotRow(stamp, id, "v" + std::to_string(id));
      row.chunk = chunk;
      row.snapshot_lsn = kS;
      rows.push_back(row);
    }
    Append(rows);
    std::vector<FactsRow> facts;
    const Offset at{Lsn::Parse(silver_testing::LsnText(stamp)), UtcMicros{1'700'000'000'000'000LL}};
    for (int chunk : chunks) {
      facts.push_back(SnapshotChunkFactsRow("app", Bronze(), Lsn::Parse(silver_testing::LsnText(kS)), wave,
                                            ChunkFacts{chunk, 1, std::nullopt, false}, at, std::nullopt, {0}, 1));
    }
    delta::DeltaTable::Open(facts_).Append({FactsToRecordBatch(facts)});
  }
  std::string facts_;
  ApplyChangesOptions options_;
};

TEST_F(ChunkedWavesTest, EachWaveDeletesTheKeysItsChunksLack) {
  // Wave 0 (stamp 21): keys 2 and 5 are gone; key 5 is inserted again at 22, after the stamp.
  Wave(0, {0, 1}, 21, {{0, 1}, {0, 3}, {1, 4}, {1, 6}});
  Append({{22, 1, 1, 2, 5, "again"}});
  auto first = ApplyChanges(options_);
  EXPECT_FALSE(first.rebuilt);
  EXPECT_EQ(first.deleted, 1);
  EXPECT_EQ(Silver(), (std::set<std::string>{"1=v1", "3=v3", "4=v4", "5=again", "6=v6", "7=v7", "8=v8", "9=v9"}));
  // Only the changes move silver's position, not the range deletes' stamps.
  EXPECT_EQ(*first.applied_lsn, silver_testing::LsnText(22));

  // Wave 1 (stamp 25): key 8 is gone; its update at 24, before the stamp, does not bring it back.
  Append({{24, 1, 1, 4, 8, "late"}});
  Wave(1, {2}, 25, {{2, 7}, {2, 9}});
  auto second = ApplyChanges(options_);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_EQ(Silver(), (std::set<std::string>{"1=v1", "3=v3", "4=v4", "5=again", "6=v6", "7=v7", "9=v9"}));
  const auto version = delta::DeltaTable::Open(dir_.File("silver")).state().version;
  EXPECT_EQ(ApplyChanges(options_).deleted, 0);
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("silver")).state().version, version);
}

}  // namespace
}  // namespace mssql_cdc
