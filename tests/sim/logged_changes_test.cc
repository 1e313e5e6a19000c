// Changes written as the log records them (Transaction::LogChange), cleanup of one capture
// instance to a low-water mark, a log that starts at a given LSN, and transactions queued to
// commit before the next snapshot read: what mssql_cdc.fake drives the simulator with.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/snapshot_read_queue.h"
#include "sim/transaction.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

class LoggedChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CreateOptions options;
    options.clock = ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-01-01 00:00:00")};
    options.first_lsn = Lsn::ParseLenient("0x00000050000001000001");
    db_ = SimDatabase::Create(dir_.File("sim.db"), options);
    for (const char* name : {"dbo.orders", "dbo.other"}) {
      TableDef t;
      t.name = ParseTableName(name);
      t.columns = {ParseColumnDeclaration("id int not null"), ParseColumnDeclaration("status nvarchar(20)")};
      t.primary_key = {"id"};
      db_->CreateTable(t);
      db_->EnableCdc(t.name);
    }
  }

  Lsn Log(std::vector<std::pair<int, Row>> changes, const char* table = "dbo.orders") {
    auto txn = db_->Begin();
    for (auto& [operation, image] : changes) txn->LogChange(ParseTableName(table), operation, image);
    return *txn->Commit().commit_lsn;
  }

  std::vector<std::tuple<int, std::int64_t, std::string>> Changes(const char* ci = "dbo_orders") {
    std::vector<std::tuple<int, std::int64_t, std::string>> out;
    for (const auto& row : db_->ChangeRows(ci)) {
      out.emplace_back(row.operation, row.values[0].as_int(),
                       row.values[1].is_null() ? "NULL" : row.values[1].as_string());
    }
    return out;
  }

  TempDir dir_;
  std::unique_ptr<SimDatabase> db_;
  TableName orders_ = ParseTableName("dbo.orders");
};

TEST_F(LoggedChangesTest, TheLogStartsWhereTheOptionsSay) {
  EXPECT_GT(db_->MinLsn("dbo_orders"), Lsn::ParseLenient("0x00000050000001000001"));
}

TEST_F(LoggedChangesTest, ChangeRowsAreTheImagesGivenAndTheTableFollows) {
  Log({{2, {{"id", 1}, {"status", "new"}}}, {2, {{"id", 2}, {"status", "new"}}}});
  Log({{3, {{"id", 1}, {"status", "as the test says"}}}, {4, {{"id", 1}, {"status", "paid"}}}});
  Log({{1, {{"id", 7}}}, {4, {{"id", 8}, {"status", "upserted"}}}, {2, {{"id", 2}, {"status", "again"}}}});
  using C = std::tuple<int, std::int64_t, std::string>;
  EXPECT_EQ(Changes(), (std::vector<C>{{2, 1, "new"}, {2, 2, "new"}, {3, 1, "as the test says"}, {4, 1, "paid"},
                                      {1, 7, "NULL"}, {3, 8, "upserted"}, {4, 8, "upserted"}, {2, 2, "again"}}));
  const auto rows = db_->Rows(orders_);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].at("status"), Value("paid"));
  EXPECT_EQ(rows[1].at("status"), Value("again"));
  EXPECT_EQ(rows[2].at("status"), Value("upserted"));
  const auto changes = db_->ChangeRows("dbo_orders");
  EXPECT_EQ(changes[2].seqval, changes[3].seqval);  // one update, two images
  EXPECT_FALSE(changes[3].IsBitSet(1));             // the key did not change
  EXPECT_TRUE(changes[3].IsBitSet(2));
}

TEST_F(LoggedChangesTest, ABeforeImageWithoutItsAfterImageCommitsNothing) {
  const auto before = db_->MaxLsn();
  auto txn = db_->Begin();
  txn->LogChange(orders_, 3, {{"id", 1}, {"status", "x"}});
  txn->LogChange(orders_, 2, {{"id", 2}});
  EXPECT_THROW(txn->Commit(), ConfigError);
  EXPECT_EQ(db_->MaxLsn(), before);
  EXPECT_TRUE(db_->Rows(orders_).empty());
  auto bad = db_->Begin();
  EXPECT_THROW(bad->LogChange(orders_, 5, {{"id", 1}}), ConfigError);
  EXPECT_THROW(bad->LogChange(orders_, 2, {{"status", "no key"}}), ConfigError);
}

TEST_F(LoggedChangesTest, CleanupOfOneInstanceKeepsWhatOthersMayRead) {
  const Lsn first = Log({{2, {{"id", 1}}}});
  Log({{2, {{"id", 1}}}}, "dbo.other");
  const Lsn third = Log({{2, {{"id", 2}}}});
  const auto result = db_->CleanupInstance("dbo_orders", third);
  EXPECT_EQ(result.change_rows_deleted, 1);
  EXPECT_EQ(db_->MinLsn("dbo_orders"), third);
  EXPECT_EQ(db_->ChangeRows("dbo_other").size(), 1u);
  // dbo_other still reads from before `first`: the mapping keeps its entries.
  EXPECT_LT(db_->LsnTimeMapping().front().start_lsn, first);
  EXPECT_THROW(db_->CleanupInstance("dbo_nope", third), NotFoundError);
}

TEST_F(LoggedChangesTest, QueuedTransactionsCommitOnceWhenClaimed) {
  EXPECT_FALSE(HasQueuedBeforeSnapshotRead(db_->sqlite()));
  QueueBeforeSnapshotRead(*db_, orders_, {{2, {{"id", 5}, {"status", "raced"}}}},
                          UtcMicros{*ParseDateTime("2026-01-02 03:04:05")});
  EXPECT_TRUE(HasQueuedBeforeSnapshotRead(db_->sqlite()));
  const auto before = db_->MaxLsn();
  EXPECT_EQ(CommitQueuedBeforeSnapshotRead(*db_), 1);
  EXPECT_EQ(CommitQueuedBeforeSnapshotRead(*db_), 0);
  EXPECT_GT(db_->MaxLsn(), before);
  EXPECT_EQ(db_->LsnTimeMapping().back().tran_end_time, "2026-01-02 03:04:05.000");
  EXPECT_EQ(db_->Rows(orders_).size(), 1u);
}

}  // namespace
}  // namespace mssql_cdc::sim
