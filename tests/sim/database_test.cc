#include "sim/database.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "core/errors.h"
#include "sim/transaction.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

constexpr std::int64_t kMinute = 60'000'000;

class SimDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CreateOptions options;
    options.clock = ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-01-01 00:00:00")};
    db_ = SimDatabase::Create(dir_.File("sim.db"), options);
    TableDef t;
    t.name = ParseTableName("dbo.items");
    for (const char* c : {"id int not null", "name nvarchar(20)", "price decimal(10,2)",
                          "notes nvarchar(max)", "legacy ntext"}) {
      t.columns.push_back(ParseColumnDeclaration(c));
    }
    t.primary_key = {"id"};
    db_->CreateTable(t);
    db_->EnableCdc(items_);
  }

  CommitResult InsertItem(int id, const std::string& name) {
    auto txn = db_->Begin();
    txn->Insert(items_, {{"id", id}, {"name", name}, {"price", "1.50"}, {"notes", "long"},
                         {"legacy", "old"}});
    return txn->Commit();
  }

  TempDir dir_;
  std::unique_ptr<SimDatabase> db_;
  TableName items_ = ParseTableName("dbo.items");
};

TEST_F(SimDatabaseTest, EnableRecordsStartLsnInLsnTimeMapping) {
  const Lsn start = db_->MinLsn("dbo_items");
  ASSERT_FALSE(start.IsZero());
  const auto mapping = db_->LsnTimeMapping();
  ASSERT_EQ(mapping.size(), 1u);
  EXPECT_EQ(mapping[0].start_lsn, start);
  EXPECT_FALSE(mapping[0].is_idle());
  EXPECT_EQ(db_->MaxLsn(), start);
  EXPECT_TRUE(db_->MinLsn("no_such_instance").IsZero());
}

TEST_F(SimDatabaseTest, CommitsGetIncreasingLsnsAndOneMappingEntryEach) {
  std::vector<Lsn> lsns;
  for (int i = 1; i <= 20; ++i) {
    auto result = InsertItem(i, "n" + std::to_string(i));
    ASSERT_TRUE(result.commit_lsn);
    lsns.push_back(*result.commit_lsn);
    EXPECT_EQ(db_->MaxLsn(), *result.commit_lsn);
  }
  for (std::size_t i = 1; i < lsns.size(); ++i) EXPECT_LT(lsns[i - 1], lsns[i]);
  const auto mapping = db_->LsnTimeMapping();
  ASSERT_EQ(mapping.size(), 21u);  // the enable and 20 commits
  std::set<std::string> tran_ids;
  for (std::size_t i = 1; i < mapping.size(); ++i) {
    EXPECT_EQ(mapping[i].start_lsn, lsns[i - 1]);
    EXPECT_FALSE(mapping[i].is_idle());
    tran_ids.insert(mapping[i].tran_id);
  }
  EXPECT_EQ(tran_ids.size(), 20u);
  // Change rows carry their commit's LSN, and every seqval lies below it.
  for (const auto& row : db_->ChangeRows("dbo_items")) EXPECT_LT(row.seqval, row.start_lsn);
}

TEST_F(SimDatabaseTest, SeqvalAndCommandIdFollowStatementOrder) {
  InsertItem(1, "a");
  InsertItem(2, "b");
  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 3}, {"name", "c"}});
  txn->Update(items_, {{"id", 1}}, {{"name", "a2"}});
  txn->Delete(items_, {{"id", 2}});
  txn->InsertMany(items_, {{{"id", 4}}, {{"id", 5}}});
  const auto result = txn->Commit();
  ASSERT_TRUE(result.commit_lsn);
  EXPECT_EQ(result.rows_affected, 5);
  EXPECT_EQ(result.change_rows, 6);
  std::vector<ChangeRow> rows;
  for (auto& row : db_->ChangeRows("dbo_items")) {
    if (row.start_lsn == *result.commit_lsn) rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<int> ops = {2, 3, 4, 1, 2, 2};
  const std::vector<int> command_ids = {1, 2, 2, 3, 4, 5};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].operation, ops[i]) << i;
    EXPECT_EQ(rows[i].command_id, command_ids[i]) << i;
  }
  // The before and after image share one seqval; every other change has its own, rising.
  EXPECT_EQ(rows[1].seqval, rows[2].seqval);
  EXPECT_LT(rows[0].seqval, rows[1].seqval);
  EXPECT_LT(rows[2].seqval, rows[3].seqval);
  EXPECT_LT(rows[3].seqval, rows[4].seqval);
  EXPECT_LT(rows[4].seqval, rows[5].seqval);
  EXPECT_EQ(rows[1].values[1], Value("a"));
  EXPECT_EQ(rows[2].values[1], Value("a2"));
  EXPECT_EQ(rows[3].values[0], Value(2));
}

TEST_F(SimDatabaseTest, UpdateMaskBitsAndLobRules) {
  InsertItem(1, "a");
  auto txn = db_->Begin();
  txn->Update(items_, {{"id", 1}}, {{"price", 2.25}});
  txn->Commit();
  txn = db_->Begin();
  txn->Update(items_, {{"id", 1}}, {{"notes", "changed"}, {"legacy", "new"}});
  txn->Commit();
  txn = db_->Begin();
  txn->Delete(items_, {{"id", 1}});
  txn->Commit();
  const auto rows = db_->ChangeRows("dbo_items");
  ASSERT_EQ(rows.size(), 6u);
  // Insert: every captured column's bit; five columns fit one byte: 0x1F.
  EXPECT_EQ(rows[0].operation, 2);
  EXPECT_EQ(rows[0].update_mask, std::string("\x1F", 1));
  // price is ordinal 3: bit 2 of the last byte.
  EXPECT_EQ(rows[1].operation, 3);
  EXPECT_EQ(rows[1].update_mask, std::string("\x04", 1));
  EXPECT_TRUE(rows[1].IsBitSet(3));
  EXPECT_FALSE(rows[1].IsBitSet(2));
  EXPECT_EQ(rows[2].update_mask, rows[1].update_mask);
  EXPECT_EQ(rows[2].values[2], Value("2.25"));
  // An unchanged nvarchar(max) and any ntext are NULL in the before image.
  EXPECT_TRUE(rows[1].values[3].is_null());
  EXPECT_TRUE(rows[1].values[4].is_null());
  EXPECT_EQ(rows[2].values[3], Value("long"));
  // A changed nvarchar(max) keeps its old value in the before image; ntext never does.
  EXPECT_EQ(rows[3].update_mask, std::string("\x18", 1));
  EXPECT_EQ(rows[3].values[3], Value("long"));
  EXPECT_TRUE(rows[3].values[4].is_null());
  EXPECT_EQ(rows[4].values[4], Value("new"));
  // Delete: all bits; ntext NULL, nvarchar(max) holds the deleted value.
  EXPECT_EQ(rows[5].operation, 1);
  EXPECT_EQ(rows[5].update_mask, std::string("\x1F", 1));
  EXPECT_EQ(rows[5].values[3], Value("changed"));
  EXPECT_TRUE(rows[5].values[4].is_null());
}

// SQL Server takes any column name as a delimited identifier: [Qty (kg)] is a column.
TEST(SimColumnNameTest, DelimitedNamesMayHoldSpacesAndPunctuation) {
  EXPECT_EQ(ParseColumnDeclaration("[Qty (kg)] int").name, "Qty (kg)");
  EXPECT_EQ(ParseColumnDeclaration("[a,b;c{d}e=f] varchar(5)").name, "a,b;c{d}e=f");
  EXPECT_THROW(ParseColumnDeclaration("[] int"), ConfigError);
  EXPECT_THROW(ParseColumnDeclaration("[a\tb] int"), ConfigError);
  EXPECT_THROW(ParseColumnDeclaration("[" + std::string(129, 'x') + "] int"), ConfigError);
}

TEST(SimDatabaseMaskTest, MaskIsBigEndianAcrossBytes) {
  TempDir dir;
  auto db = SimDatabase::Create(dir.File("wide.db"));
  TableDef t;
  t.name = ParseTableName("dbo.wide");
  for (int i = 1; i <= 10; ++i) {
    t.columns.push_back(ParseColumnDeclaration("c" + std::to_string(i) + " int"));
  }
  t.primary_key = {"c1"};
  db->CreateTable(t);
  db->EnableCdc(t.name);
  auto txn = db->Begin();
  txn->Insert(t.name, {{"c1", 1}});
  txn->Update(t.name, {{"c1", 1}}, {{"c9", 9}, {"c2", 2}});
  txn->Commit();
  const auto rows = db->ChangeRows("dbo_wide");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].update_mask, std::string("\x03\xFF", 2));
  // Ordinal 9 is the lowest bit of the first byte; ordinal 2 bit 1 of the last.
  EXPECT_EQ(rows[1].update_mask, std::string("\x01\x02", 2));
}

TEST_F(SimDatabaseTest, IdleEntriesMoveMaxLsnWithoutChangeRows) {
  InsertItem(1, "a");
  const Lsn before = *db_->MaxLsn();
  const auto count = db_->ChangeRowCount("dbo_items");
  const Lsn idle = db_->WriteIdleEntry();
  EXPECT_GT(idle, before);
  EXPECT_EQ(db_->MaxLsn(), idle);
  EXPECT_EQ(db_->ChangeRowCount("dbo_items"), count);
  const auto mapping = db_->LsnTimeMapping();
  EXPECT_TRUE(mapping.back().is_idle());
  EXPECT_EQ(mapping.back().tran_id, std::string(10, '\0'));
  // The next commit still goes above the idle entry.
  EXPECT_GT(*InsertItem(2, "b").commit_lsn, idle);
}

TEST_F(SimDatabaseTest, CleanupMovesMinLsnAndDeletesRows) {
  std::vector<Lsn> lsns;
  for (int i = 1; i <= 10; ++i) {
    lsns.push_back(*InsertItem(i, "x").commit_lsn);
    db_->AdvanceClock(10 * kMinute);
  }
  // Commit i happened at minute 10*(i-1); the max LSN's at minute 90. Keep 35 minutes:
  // threshold minute 55, so the first kept commit is the one at minute 60 (i = 7).
  const auto result = db_->Cleanup(35);
  ASSERT_TRUE(result.low_water_mark);
  EXPECT_EQ(*result.low_water_mark, lsns[6]);
  EXPECT_EQ(db_->MinLsn("dbo_items"), lsns[6]);
  EXPECT_EQ(result.change_rows_deleted, 6);
  const auto rows = db_->ChangeRows("dbo_items");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows.front().start_lsn, lsns[6]);
  EXPECT_EQ(db_->LsnTimeMapping().front().start_lsn, lsns[6]);
  // A longer retention later never moves the min LSN back.
  db_->Cleanup(10000);
  EXPECT_EQ(db_->MinLsn("dbo_items"), lsns[6]);
  EXPECT_THROW(db_->Cleanup(-1), ConfigError);
}

TEST_F(SimDatabaseTest, SecondCaptureInstanceAfterAddColumn) {
  InsertItem(1, "a");
  db_->AddColumn(items_, ParseColumnDeclaration("color varchar(10)"));
  auto history = db_->DdlHistory("dbo_items");
  ASSERT_EQ(history.size(), 1u);
  EXPECT_NE(history[0].ddl_command.find("ADD [color]"), std::string::npos);
  EXPECT_EQ(history[0].ddl_lsn, *db_->MaxLsn());

  EnableCdcOptions v2;
  v2.capture_instance = "dbo_items_v2";
  db_->EnableCdc(items_, v2);
  const Lsn enabled_at = *db_->MaxLsn();
  // Until the capture process reaches the enable, the new instance's min LSN reads zero.
  EXPECT_TRUE(db_->MinLsn("dbo_items_v2").IsZero());
  EXPECT_EQ(db_->Instance("dbo_items").columns.size(), 5u);
  EXPECT_EQ(db_->Instance("dbo_items_v2").columns.size(), 6u);

  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 2}, {"color", "red"}});
  const Lsn lsn = *txn->Commit().commit_lsn;
  EXPECT_EQ(db_->MinLsn("dbo_items_v2"), enabled_at);
  EXPECT_GT(db_->MinLsn("dbo_items_v2"), db_->MinLsn("dbo_items"));
  const auto old_rows = db_->ChangeRows("dbo_items");
  const auto new_rows = db_->ChangeRows("dbo_items_v2");
  ASSERT_EQ(new_rows.size(), 1u);
  EXPECT_EQ(new_rows[0].start_lsn, lsn);
  EXPECT_EQ(new_rows[0].values[5], Value("red"));
  EXPECT_EQ(old_rows.back().start_lsn, lsn);
  EXPECT_EQ(old_rows.back().values.size(), 5u);
  EXPECT_EQ(old_rows.back().seqval, new_rows[0].seqval);

  // A third instance is refused, as is a duplicate name; nothing changes.
  EnableCdcOptions v3;
  v3.capture_instance = "dbo_items_v3";
  EXPECT_THROW(db_->EnableCdc(items_, v3), ConfigError);
  EXPECT_EQ(db_->CaptureInstances().size(), 2u);
  db_->DisableCdc("dbo_items");
  EXPECT_THROW(db_->EnableCdc(items_, v2), ConfigError);
  EXPECT_NO_THROW(db_->EnableCdc(items_, v3));
}

TEST_F(SimDatabaseTest, IdleEntryProcessesAPendingEnable) {
  EnableCdcOptions v2;
  v2.capture_instance = "dbo_items_v2";
  db_->EnableCdc(items_, v2);
  const Lsn enabled_at = *db_->MaxLsn();
  EXPECT_TRUE(db_->MinLsn("dbo_items_v2").IsZero());
  db_->Cleanup(0);  // cleanup is not the capture process
  EXPECT_TRUE(db_->MinLsn("dbo_items_v2").IsZero());
  db_->WriteIdleEntry();
  EXPECT_EQ(db_->MinLsn("dbo_items_v2"), enabled_at);
}

TEST_F(SimDatabaseTest, AlterColumnConvertsStoredValuesAndRecapturesTheType) {
  InsertItem(1, "a");
  db_->AlterColumn(items_, ParseColumnDeclaration("price decimal(12,3)"));
  const auto history = db_->DdlHistory("dbo_items");
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].ddl_command, "ALTER TABLE [dbo].[items] ALTER COLUMN [price] decimal(12,3) NULL");
  EXPECT_EQ(history[0].ddl_lsn, *db_->MaxLsn());
  EXPECT_EQ(db_->Table(items_).Find("price")->type.ToString(), "decimal(12,3)");
  EXPECT_EQ(db_->Instance("dbo_items").columns[2].type.ToString(), "decimal(12,3)");
  // Rows written before, in the table and the change table, hold the new type's form.
  EXPECT_EQ(db_->Rows(items_)[0].at("price"), Value("1.500"));
  EXPECT_EQ(db_->ChangeRows("dbo_items")[0].values[2], Value("1.500"));
  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 2}, {"price", "123456789.125"}});
  txn->Commit();

  // A value that does not fit, a key column, NOT NULL over NULLs, another storage class:
  // refused, nothing changed.
  EXPECT_THROW(db_->AlterColumn(items_, ParseColumnDeclaration("price decimal(5,2)")), ConfigError);
  EXPECT_THROW(db_->AlterColumn(items_, ParseColumnDeclaration("id bigint not null")), ConfigError);
  EXPECT_THROW(db_->AlterColumn(items_, ParseColumnDeclaration("name nvarchar(20) not null")),
               ConfigError);
  EXPECT_THROW(db_->AlterColumn(items_, ParseColumnDeclaration("price int")), ConfigError);
  EXPECT_EQ(db_->Table(items_).Find("price")->type.ToString(), "decimal(12,3)");
  EXPECT_EQ(db_->DdlHistory("dbo_items").size(), 1u);
}

TEST_F(SimDatabaseTest, DroppedColumnGivesNull) {
  InsertItem(1, "a");
  db_->DropColumn(items_, "price");
  EXPECT_THROW(db_->DropColumn(items_, "id"), ConfigError);  // a key column
  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 2}, {"name", "b"}});
  txn->Commit();
  const auto rows = db_->ChangeRows("dbo_items");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].values[2], Value("1.50"));
  EXPECT_TRUE(rows[1].values[2].is_null());
  EXPECT_EQ(rows[1].values[1], Value("b"));
}

TEST_F(SimDatabaseTest, RollbackAndFailedCommitLeaveNothing) {
  InsertItem(1, "a");
  const auto max = db_->MaxLsn();
  const auto mapping = db_->LsnTimeMapping().size();
  auto txn = db_->Begin();
  txn->Insert(items_, {{"id", 2}});
  txn->Rollback();
  EXPECT_THROW(txn->Commit(), ConfigError);
  // A duplicate key fails the whole commit, including the statement before it.
  txn = db_->Begin();
  txn->Insert(items_, {{"id", 3}});
  txn->Insert(items_, {{"id", 1}});
  EXPECT_THROW(txn->Commit(), ConfigError);
  txn = db_->Begin();
  txn->Update(items_, {{"id", 99}}, {{"name", "x"}});
  EXPECT_THROW(txn->Commit(), NotFoundError);
  {
    auto dropped = db_->Begin();
    dropped->Insert(items_, {{"id", 4}});
  }  // destroyed without commit
  EXPECT_EQ(db_->MaxLsn(), max);
  EXPECT_EQ(db_->LsnTimeMapping().size(), mapping);
  EXPECT_EQ(db_->RowCount(items_), 1);
  EXPECT_EQ(db_->ChangeRowCount("dbo_items"), 1);
}

TEST_F(SimDatabaseTest, TableWithoutCdcChangesOnlyTheTable) {
  TableDef t;
  t.name = ParseTableName("dbo.plain");
  t.columns = {ParseColumnDeclaration("id int not null")};
  t.primary_key = {"id"};
  db_->CreateTable(t);
  const auto max = db_->MaxLsn();
  auto txn = db_->Begin();
  txn->Insert(t.name, {{"id", 1}});
  const auto result = txn->Commit();
  EXPECT_FALSE(result.commit_lsn);
  EXPECT_EQ(db_->MaxLsn(), max);
  EXPECT_EQ(db_->RowCount(t.name), 1);
}

TEST_F(SimDatabaseTest, StatementErrorsNameTheColumn) {
  auto txn = db_->Begin();
  try {
    txn->Insert(items_, {{"id", 1}, {"name", std::string(21, 'x')}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("column name"), std::string::npos) << e.what();
  }
  EXPECT_THROW(txn->Insert(items_, {{"id", 1}, {"nope", 1}}), ConfigError);
  EXPECT_THROW(txn->Insert(items_, {{"name", "no key"}}), ConfigError);
  EXPECT_THROW(txn->Insert(items_, {{"id", 1}, {"price", "123456789.1"}}), ConfigError);
  EXPECT_THROW(txn->Update(items_, {{"id", 1}}, {{"id", 2}}), ConfigError);
  EXPECT_THROW(txn->Update(items_, {{"name", "a"}}, {{"price", 1}}), ConfigError);
  EXPECT_THROW(txn->Insert(ParseTableName("dbo.missing"), {{"id", 1}}), NotFoundError);
  EXPECT_EQ(txn->statement_count(), 0u);
}

TEST_F(SimDatabaseTest, DdlErrorsChangeNothing) {
  TableDef bad;
  bad.name = ParseTableName("dbo.bad");
  bad.columns = {ParseColumnDeclaration("id int not null"), ParseColumnDeclaration("g geography")};
  bad.primary_key = {"id"};
  EXPECT_THROW(db_->CreateTable(bad), ConfigError);
  bad.columns.pop_back();
  bad.primary_key = {"other"};
  EXPECT_THROW(db_->CreateTable(bad), ConfigError);
  bad.primary_key = {};
  EXPECT_THROW(db_->CreateTable(bad), ConfigError);
  EXPECT_EQ(db_->Tables().size(), 1u);
  EXPECT_THROW(db_->AddColumn(items_, ParseColumnDeclaration("name int")), ConfigError);
  InsertItem(1, "a");
  EXPECT_THROW(db_->AddColumn(items_, ParseColumnDeclaration("req int not null")), ConfigError);
  EXPECT_EQ(db_->Table(items_).columns.size(), 5u);
  EnableCdcOptions partial;
  partial.capture_instance = "partial";
  partial.captured_columns = {"name"};
  EXPECT_THROW(db_->EnableCdc(items_, partial), ConfigError);  // lacks the key
  EXPECT_THROW(ParseColumnDeclaration("x"), ConfigError);
  EXPECT_THROW(ParseTableName("dbo.t;drop"), ConfigError);
}

TEST_F(SimDatabaseTest, CommitTimesUseTheServerClock) {
  db_->AdvanceClock(kMinute + 1234);
  InsertItem(1, "a");
  const auto entry = db_->LsnTimeMapping().back();
  EXPECT_EQ(entry.tran_end_time, "2026-01-01 00:01:00.000");
  EXPECT_EQ(entry.tran_begin_time, "2026-01-01 00:01:00.000");
}

TEST(SimDatabaseTimeZoneTest, CommitTimesAreLocal) {
  TempDir dir;
  CreateOptions options;
  options.time_zone = "Tokyo Standard Time";
  options.clock = ClockMode::kManual;
  options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 12:00:00.005")};
  auto db = SimDatabase::Create(dir.File("tokyo.db"), options);
  db->WriteIdleEntry();
  // UTC+9, and 5 ms rounds to SQL Server's datetime 1/300 s grid: .007.
  EXPECT_EQ(db->LsnTimeMapping().back().tran_end_time, "2026-03-01 21:00:00.007");
  EXPECT_EQ(db->time_zone(), "Tokyo Standard Time");
  CreateOptions bad;
  bad.time_zone = "Mars Standard Time";
  EXPECT_THROW(SimDatabase::Create(dir.File("mars.db"), bad), ConfigError);
  EXPECT_FALSE(std::filesystem::exists(dir.File("mars.db")));
}

TEST(SimDatabaseFileTest, RefusesFilesThatAreNotSimDatabases) {
  TempDir dir;
  const std::string text_file = dir.File("notes.txt");
  std::ofstream(text_file) << "hello";
  try {
    SimDatabase::Open(text_file);
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a mssql-cdc simulated database"),
              std::string::npos);
  }
  EXPECT_THROW(SimDatabase::Create(text_file), ConfigError);
  std::ifstream in(text_file);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "hello");
  EXPECT_THROW(SimDatabase::Open(dir.File("missing.db")), SourceError);
  SimDatabase::Create(dir.File("sim.db"));
  EXPECT_THROW(SimDatabase::Create(dir.File("sim.db")), ConfigError);
  EXPECT_NO_THROW(SimDatabase::Open(dir.File("sim.db")));
}

TEST(SimDatabaseFileTest, RefusesANewerFormatVersion) {
  TempDir dir;
  {
    auto db = SimDatabase::Create(dir.File("sim.db"));
    db->catalog().SetMeta("format_version", "99");
  }
  EXPECT_THROW(SimDatabase::Open(dir.File("sim.db")), SourceError);
}

TEST_F(SimDatabaseTest, ReaderInAnotherProcessSeesWholeCommits) {
  const std::string path = db_->path();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The reader: every observed state has 2 change rows per committed pair of inserts.
    int status = 0;
    try {
      auto reader = SimDatabase::Open(path);
      for (int i = 0; i < 300; ++i) {
        const auto rows = reader->ChangeRows("dbo_items");
        if (rows.size() % 2 != 0) status = 1;
        for (std::size_t r = 1; r < rows.size(); ++r) {
          if (rows[r].start_lsn < rows[r - 1].start_lsn) status = 2;
        }
      }
    } catch (...) {
      status = 3;
    }
    _exit(status);
  }
  for (int i = 0; i < 200; ++i) {
    auto txn = db_->Begin();
    txn->Insert(items_, {{"id", 2 * i}});
    txn->Insert(items_, {{"id", 2 * i + 1}});
    txn->Commit();
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(db_->ChangeRowCount("dbo_items"), 400);
}

}  // namespace
}  // namespace mssql_cdc::sim
