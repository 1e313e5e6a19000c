// A native stream meeting schema changes of its table (docs/schema-changes.md): DDL recorded
// in a batch, a newer capture instance taking over at its start LSN, bronze evolving in place,
// and the refusals: a type bronze cannot take, schemaChangePolicy=fail, an old instance
// disabled before the stream passed its successor's start.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/errors.h"
#include "engine/stream.h"
#include "sim/transaction.h"
#include "tests/testing/served_sim.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;

class StreamSchemaChangeTest : public StreamTest {
 protected:
  static constexpr char kNewInstance[] = "dbo_items_v2";

  // Adds `column` (color by default), then enables the instance that captures it.
  void SwitchToAnInstanceWithColor(const char* column = "color varchar(10)") {
    db_->AdvanceClock(1'000'000);
    db_->AddColumn(items_, sim::ParseColumnDeclaration(column));
    db_->AdvanceClock(1'000'000);
    sim::EnableCdcOptions v2;
    v2.capture_instance = kNewInstance;
    db_->EnableCdc(items_, v2);
  }

  Lsn InsertColored(int id, const char* color) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    txn->Insert(items_, {{"id", id}, {"name", "colored"}, {"qty", 1}, {"color", color}});
    return *txn->Commit().commit_lsn;
  }

  // The changes of the table as a stream must read them: the older instance below the newer
  // one's start, the newer from it.
  std::multiset<stream_testing::ChangeKey> TableChanges(const Lsn& switch_at) const {
    std::multiset<stream_testing::ChangeKey> keys;
    for (const auto& row : db_->ChangeRows(kInstance)) {
      if (row.start_lsn < switch_at) {
        keys.emplace(row.start_lsn.ToString(), row.seqval.ToString(), row.operation);
      }
    }
    for (const auto& row : db_->ChangeRows(kNewInstance)) {
      keys.emplace(row.start_lsn.ToString(), row.seqval.ToString(), row.operation);
    }
    return keys;
  }

  // Facts rows of `event`, as (min_lsn, detail).
  std::vector<std::pair<std::string, std::string>> Events(const std::string& event) const {
    const auto facts = Facts();
    const auto events = StringColumn(facts, "event");
    const auto lsns = StringColumn(facts, "min_lsn");
    const auto details = StringColumn(facts, "detail");
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i] && *events[i] == event) out.emplace_back(*lsns[i], *details[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(StreamSchemaChangeTest, ANewerInstanceWithANewColumnTakesOverInPlaceAndBronzeGainsIt) {
  Insert(1, 3);
  RunOnce(Config());
  SwitchToAnInstanceWithColor();
  Update(1, 9);  // the capture process reaches the enable with this commit
  InsertColored(10, "red");
  const Lsn s = db_->MinLsn(kNewInstance);
  ASSERT_FALSE(s.IsZero());

  const StreamProgress progress = RunOnce(Config());
  EXPECT_TRUE(progress.caught_up);
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  // New rows carry the new column; rows read from the older instance read NULL in it.
  const auto bronze = Bronze();
  const auto colors = StringColumn(bronze, "color");
  const auto instances = StringColumn(bronze, "_capture_instance");
  const auto lsns = StringColumn(bronze, "_start_lsn");
  int red = 0;
  for (std::size_t i = 0; i < colors.size(); ++i) {
    const bool newer = *lsns[i] >= s.ToString();
    EXPECT_EQ(*instances[i], newer ? kNewInstance : kInstance) << *lsns[i];
    if (colors[i] && *colors[i] == "red") ++red;
  }
  EXPECT_EQ(red, 1);
  const auto switched = Events("capture_instance_switched");
  ASSERT_EQ(switched.size(), 1u);
  EXPECT_EQ(switched[0].first, s.ToString());
  EXPECT_EQ(switched[0].second, "dbo_items -> dbo_items_v2");
  const auto ddl = Events("schema_change");
  ASSERT_EQ(ddl.size(), 1u);
  EXPECT_EQ(ddl[0].second, "ALTER TABLE [dbo].[items] ADD [color] varchar(10) NULL");

  // The old instance may go now: the stream goes on with the new one, no event again.
  const std::size_t read_before = TableChanges(s).size();
  db_->DisableCdc(kInstance);
  InsertColored(11, "blue");
  RunOnce(Config());
  EXPECT_EQ(BronzeChanges().size(), read_before + 1);
  EXPECT_EQ(Events("capture_instance_switched").size(), 1u);
}

TEST_F(StreamSchemaChangeTest, ABatchStopsBeforeAnEnableTheCaptureProcessHasNotReached) {
  Insert(1, 2);
  SwitchToAnInstanceWithColor();
  ASSERT_TRUE(db_->MinLsn(kNewInstance).IsZero());
  RunOnce(Config());
  EXPECT_TRUE(Events("capture_instance_switched").empty());
  InsertColored(10, "red");  // processes the enable
  const Lsn s = db_->MinLsn(kNewInstance);
  RunOnce(Config());
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  EXPECT_EQ(Events("capture_instance_switched").size(), 1u);
}

TEST_F(StreamSchemaChangeTest, ASwitchCrossedBySmallBatchesIsWrittenOnce) {
  Insert(1, 2);
  SwitchToAnInstanceWithColor();
  for (int id = 10; id < 16; ++id) InsertColored(id, "red");
  const Lsn s = db_->MinLsn(kNewInstance);
  RunOnce(Config({{"maxCommitsPerBatch", "2"}}));
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  EXPECT_EQ(Events("capture_instance_switched").size(), 1u);
}

TEST_F(StreamSchemaChangeTest, AnOldInstanceDisabledBeforeTheStreamPassedTheSwitchIsDataLoss) {
  Insert(1, 2);
  RunOnce(Config());
  Insert(5, 2);  // not read yet
  SwitchToAnInstanceWithColor();
  InsertColored(10, "red");
  db_->DisableCdc(kInstance);
  try {
    RunOnce(Config());
    FAIL() << "expected DataLossError";
  } catch (const DataLossError& e) {
    EXPECT_NE(std::string(e.what()).find("capture instance 'dbo_items' was disabled before the "
                                         "stream read up to LSN"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(StreamSchemaChangeTest, DroppedColumnReadsNullAndTheDdlIsAFactsRow) {
  Insert(1, 2);
  RunOnce(Config());
  db_->AdvanceClock(1'000'000);
  db_->DropColumn(items_, "name");
  db_->AdvanceClock(1'000'000);
  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 5}, {"qty", 1}});
  txn->Commit();
  RunOnce(Config());
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  const auto ddl = Events("schema_change");
  ASSERT_EQ(ddl.size(), 1u);
  EXPECT_EQ(ddl[0].second, "ALTER TABLE [dbo].[items] DROP COLUMN [name]");
  const auto names = StringColumn(Bronze(), "name");
  EXPECT_EQ(std::count(names.begin(), names.end(), std::nullopt), 1);
}

TEST_F(StreamSchemaChangeTest, ATypeChangeTheStreamHoldsGoesOn) {
  Insert(1, 2);
  RunOnce(Config());
  db_->AdvanceClock(1'000'000);
  db_->AlterColumn(items_, sim::ParseColumnDeclaration("qty smallint"));
  Update(1, 3);
  RunOnce(Config());
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  EXPECT_EQ(Events("schema_change").size(), 1u);
  EXPECT_EQ(Bronze()->schema()->GetFieldByName("qty")->type()->ToString(), "int32");
}

TEST_F(StreamSchemaChangeTest, AWideningBronzeCannotTakeStopsBeforeReadingWithTheStatement) {
  Insert(1, 2);
  RunOnce(Config());
  db_->AdvanceClock(1'000'000);
  db_->AlterColumn(items_, sim::ParseColumnDeclaration("qty bigint"));
  Update(1, 3);
  const auto before = BronzeChanges();
  try {
    RunOnce(Config());
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    EXPECT_NE(std::string(e.what()).find("SET TBLPROPERTIES ('delta.enableTypeWidening'='true')"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(BronzeChanges(), before);
}

TEST_F(StreamSchemaChangeTest, SchemaChangePolicyFailStopsAtAnyDdl) {
  Insert(1, 2);
  RunOnce(Config());
  db_->AdvanceClock(1'000'000);
  db_->AddColumn(items_, sim::ParseColumnDeclaration("color varchar(10)"));
  Insert(5, 1);
  try {
    RunOnce(Config({{"schemaChangePolicy", "fail"}}));
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    EXPECT_NE(std::string(e.what()).find("schemaChangePolicy=fail stops at any DDL"),
              std::string::npos)
        << e.what();
  }
  // Once with classify passes it.
  RunOnce(Config());
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamSchemaChangeTest, TheColumnsOptionReadsItsColumnsAndSwitchesWithoutWidening) {
  Insert(1, 2);
  SwitchToAnInstanceWithColor();
  InsertColored(10, "red");
  const Lsn s = db_->MinLsn(kNewInstance);
  RunOnce(Config({{"columns", "id INT, QTY BIGINT"}}));
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  const auto schema = Bronze()->schema();
  EXPECT_EQ(schema->GetFieldByName("name"), nullptr);
  EXPECT_EQ(schema->GetFieldByName("color"), nullptr);
  ASSERT_NE(schema->GetFieldByName("qty"), nullptr);  // as SQL Server spells it
  EXPECT_EQ(schema->GetFieldByName("qty")->type()->ToString(), "int64");
  const auto switched = Events("capture_instance_switched");
  ASSERT_EQ(switched.size(), 1u);
  EXPECT_EQ(switched[0].second,
            "dbo_items -> dbo_items_v2; left out by the columns option: name STRING, color STRING");
}

TEST_F(StreamSchemaChangeTest, AListedColumnNoInstanceCapturesIsRefusedBeforeAnythingIsWritten) {
  Insert(1, 2);
  try {
    RunOnce(Config({{"columns", "id INT, colour STRING"}}));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("No capture instance of dbo.items captures column 'colour'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("checkpoint")));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("bronze")));
}

TEST_F(StreamSchemaChangeTest, TwoInstancesTypingAColumnIncompatiblyAreRefusedUnlessColumnsChooses) {
  Insert(1, 2);
  // qty becomes a string in a new instance (drop it, add it back as another type).
  db_->AdvanceClock(1'000'000);
  db_->DropColumn(items_, "qty");
  db_->AddColumn(items_, sim::ParseColumnDeclaration("qty varchar(10)"));
  sim::EnableCdcOptions v2;
  v2.capture_instance = kNewInstance;
  db_->EnableCdc(items_, v2);
  try {
    RunOnce(Config());
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    EXPECT_NE(std::string(e.what()).find("type column 'qty' incompatibly"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("checkpoint")));
  // Naming the type to read with is the way through.
  RunOnce(Config({{"columns", "id INT, name STRING, qty STRING"}}));
  EXPECT_EQ(Bronze()->schema()->GetFieldByName("qty")->type()->ToString(), "string");
}

TEST_F(StreamSchemaChangeTest, SnapshotOnSwitchGivesUnchangedRowsTheNewColumnsOnce) {
  Insert(1, 3);
  RunOnce(Config());
  db_->AdvanceClock(1'000'000);
  db_->AddColumn(items_, sim::ParseColumnDeclaration("color varchar(10)"));
  {
    // The DBA fills the new column before the new instance exists: only a snapshot carries it.
    auto txn = db_->Begin();
    txn->Update(items_, {{"id", 1}}, {{"color", "blue"}});
    txn->Commit();
  }
  sim::EnableCdcOptions v2;
  v2.capture_instance = kNewInstance;
  db_->EnableCdc(items_, v2);
  InsertColored(10, "red");
  const Lsn s = db_->MinLsn(kNewInstance);
  StreamConfig config = Config();
  config.params.snapshot_on_switch = true;
  RunOnce(config);
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  auto snapshot_rows = [&] {
    std::map<std::int64_t, std::optional<std::string>> colors;
    const auto bronze = Bronze();
    const auto ops = Int64Column(bronze, "_operation");
    const auto ids = Int64Column(bronze, "id");
    const auto color = StringColumn(bronze, "color");
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i] == 0) {
        EXPECT_EQ(colors.count(ids[i]), 0u) << "snapshot row twice: " << ids[i];
        colors[ids[i]] = color[i];
      }
    }
    return colors;
  };
  const auto colors = snapshot_rows();
  ASSERT_EQ(colors.size(), 4u);
  EXPECT_EQ(colors.at(1), "blue");
  EXPECT_EQ(colors.at(10), "red");
  EXPECT_EQ(colors.at(2), std::nullopt);
  // A later run takes no second snapshot.
  InsertColored(11, "green");
  RunOnce(config);
  EXPECT_EQ(snapshot_rows().size(), 4u);
}

TEST_F(StreamSchemaChangeTest, ALeastPrivilegeLoginMeetsANewChangeTableWithTheGrantToRun) {
  // A login granted the source table and the old change table only, as spec 4.14's least
  // privilege, through sim serve: SQL Server lists the new instance to it (it may select the
  // source table), but reading the new change table needs a grant of its own.
  testing::ServedSim served(db_->path());
  db_->AddLogin("t9_reader", "Reader-pw-1", /*is_db_owner=*/false);
  db_->Grant("t9_reader", "dbo.items");
  db_->Grant("t9_reader", "cdc.dbo_items_CT");
  const Options reader = served.SourceOptionsText().MergedWith(
      Options{{"user", "t9_reader"}, {"password", "Reader-pw-1"}, {"captureInstance", kInstance},
              {"sourceTimeZone", "UTC"}});
  auto config = [&] {
    StreamConfig c = Config();
    c.source = SourceOptions::Parse(reader);
    return c;
  };
  Insert(1, 2);
  RunOnce(config());
  SwitchToAnInstanceWithColor();
  InsertColored(10, "red");
  const Lsn s = db_->MinLsn(kNewInstance);
  try {
    RunOnce(config());
    FAIL() << "expected PermissionError";
  } catch (const PermissionError& e) {
    EXPECT_NE(std::string(e.what()).find("GRANT SELECT ON cdc.[dbo_items_v2_CT] TO [t9_reader];"),
              std::string::npos)
        << e.what();
  }
  db_->Grant("t9_reader", "cdc.dbo_items_v2_CT");
  RunOnce(config());
  EXPECT_EQ(BronzeChanges(), TableChanges(s));
  EXPECT_EQ(Events("capture_instance_switched").size(), 1u);
}

// A stream configured with the older instance bootstraps after the newer one took over: the
// snapshot reads the table through the newer instance, so its rows carry the new column.
TEST_F(StreamSchemaChangeTest, ABootstrapReadsTheTableThroughItsNewestInstance) {
  Insert(1, 2);
  SwitchToAnInstanceWithColor();
  InsertColored(10, "red");
  ASSERT_FALSE(db_->MinLsn(kNewInstance).IsZero());
  StreamConfig config = Config();
  config.params.bootstrap = true;
  RunOnce(config);
  const auto bronze = Bronze();
  const auto ops = Int64Column(bronze, "_operation");
  const auto ids = Int64Column(bronze, "id");
  const auto colors = StringColumn(bronze, "color");
  const auto instances = StringColumn(bronze, "_capture_instance");
  std::map<std::int64_t, std::optional<std::string>> snapshot;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i] != 0) continue;
    snapshot[ids[i]] = colors[i];
    EXPECT_EQ(*instances[i], kNewInstance);
  }
  EXPECT_EQ(snapshot, (std::map<std::int64_t, std::optional<std::string>>{
                          {1, std::nullopt}, {2, std::nullopt}, {10, "red"}}));
}

// A captured column whose name a Delta table stores only with column mapping ("Qty (kg)"):
// bronze is created with mapping, and a column a newer instance adds is mapped too.
TEST_F(StreamSchemaChangeTest, ACapturedNameThatNeedsColumnMappingGivesBronzeMapping) {
  const sim::TableName weights = sim::ParseTableName("dbo.weights");
  sim::TableDef table;
  table.name = weights;
  for (const char* c : {"id int not null", "[Qty (kg)] int"}) {
    table.columns.push_back(sim::ParseColumnDeclaration(c));
  }
  table.primary_key = {"id"};
  db_->CreateTable(table);
  db_->EnableCdc(weights);
  auto insert = [&](int id, std::optional<int> price) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    sim::Row row = {{"id", id}, {"Qty (kg)", id * 10}};
    if (price) row["Unit price"] = *price;
    txn->Insert(weights, row);
    txn->Commit();
  };
  insert(1, std::nullopt);
  insert(2, std::nullopt);
  const Options weights_instance = {{"captureInstance", "dbo_weights"}};
  RunOnce(Config(weights_instance));
  auto bronze = delta::DeltaTable::Open(dir_.File("bronze"));
  EXPECT_EQ(bronze.state().metadata.configuration.at("delta.columnMapping.mode"), "name");
  auto sorted = [](std::vector<std::int64_t> values) {
    std::sort(values.begin(), values.end());
    return values;
  };
  EXPECT_EQ(sorted(Int64Column(Bronze(), "Qty (kg)")), (std::vector<std::int64_t>{10, 20}));

  db_->AdvanceClock(1'000'000);
  db_->AddColumn(weights, sim::ParseColumnDeclaration("[Unit price] int"));
  db_->AdvanceClock(1'000'000);
  sim::EnableCdcOptions v2;
  v2.capture_instance = "dbo_weights_v2";
  db_->EnableCdc(weights, v2);
  insert(3, 7);
  insert(4, 8);
  RunOnce(Config(weights_instance));
  const auto rows = Bronze();
  EXPECT_EQ(sorted(Int64Column(rows, "Unit price")), (std::vector<std::int64_t>{-1, -1, 7, 8}));
  EXPECT_EQ(sorted(Int64Column(rows, "Qty (kg)")), (std::vector<std::int64_t>{10, 20, 30, 40}));
  const auto field = delta::DeltaTable::Open(dir_.File("bronze")).state().schema()->GetFieldByName("Unit price");
  ASSERT_TRUE(field && field->metadata());
  EXPECT_TRUE(field->metadata()->Contains("delta.columnMapping.physicalName"));
}

// Bronze without column mapping meets a new column that needs it: the batch stops before
// reading, with the ALTER TABLE that enables mapping, and writes nothing.
TEST_F(StreamSchemaChangeTest, ANewColumnThatNeedsColumnMappingStopsWithTheStatement) {
  Insert(1, 2);
  RunOnce(Config());
  const auto before = BronzeChanges();
  const auto version = delta::DeltaTable::Open(dir_.File("bronze")).state().version;
  SwitchToAnInstanceWithColor("[Unit price] int");
  Update(1, 9);
  Update(2, 9);
  try {
    RunOnce(Config());
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    const std::string expected = "ALTER TABLE delta.`" + dir_.File("bronze") +
                                 "` SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
                                 "'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'Unit price'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(BronzeChanges(), before);
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("bronze")).state().version, version);
}

}  // namespace
}  // namespace mssql_cdc
