// Answers to change-row reads: the odbc backend's join of a change table to its commit times,
// and cdc.fn_cdc_get_all_changes_<ci> with SQL Server's error 313 outside the validity
// interval; names that do not resolve (208, 207), missing grants (229), and the one read
// snapshot a statement sees while a simulator commits.
#include <gtest/gtest.h>

#include <functional>

#include "shop_fixture.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

class ChangeAnswersTest : public ShopFixture {};

const std::vector<std::string> kAllColumns = {"id", "region", "amount", "placed", "note",
                                              "raw", "flag", "ratio", "guid"};

TEST_F(ChangeAnswersTest, ChangeRowsAreTheStoredRowsWithTheirCommitTimes) {
  const RecordingReply reply = Run(ToRpcText(sql::ChangeRows("dbo_orders", kAllColumns, true)),
                                   Range(Lsn(), commits_.back()));
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  std::vector<std::string> names = {"__$start_lsn", "__$seqval", "__$operation", "__$command_id",
                                    "tran_end_time"};
  names.insert(names.end(), kAllColumns.begin(), kAllColumns.end());
  EXPECT_EQ(result.ColumnNames(), names);
  EXPECT_EQ(result.ColumnTypes(),
            (std::vector<std::string>{"binary(10)", "binary(10)", "int", "int", "datetime",
                                      "int", "nvarchar(20)", "decimal(18,2)", "datetime2(3)",
                                      "nvarchar(max)", "varbinary(16)", "bit", "float",
                                      "uniqueidentifier"}));

  const auto stored = db_->ChangeRows("dbo_orders");
  const auto mapping = db_->LsnTimeMapping();
  ASSERT_EQ(result.rows.size(), stored.size());
  ASSERT_EQ(stored.size(), 5u);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(result.At(i, "__$start_lsn"), Cell(Bytes{LsnBytes(stored[i].start_lsn)}));
    EXPECT_EQ(result.At(i, "__$seqval"), Cell(Bytes{LsnBytes(stored[i].seqval)}));
    EXPECT_EQ(result.At(i, "__$operation"), Cell(std::int64_t{stored[i].operation}));
    EXPECT_EQ(result.At(i, "__$command_id"), Cell(std::int64_t{stored[i].command_id}));
    for (const auto& entry : mapping) {
      if (entry.start_lsn == stored[i].start_lsn) {
        EXPECT_EQ(result.Text(i, "tran_end_time"), entry.tran_end_time);
      }
    }
  }
  // The values as stored: the forms ResultSet takes.
  EXPECT_EQ(result.At(0, "id"), Cell(std::int64_t{1}));
  EXPECT_EQ(result.At(0, "amount"), Cell(std::string("12.50")));
  EXPECT_EQ(result.At(0, "placed"), Cell(std::string("2026-01-02 03:04:05.6780000")));
  EXPECT_EQ(result.At(0, "note"), Cell(std::string("héllo")));
  EXPECT_EQ(result.At(0, "raw"), Cell(Bytes{std::string("\x01\x00\xFF", 3)}));
  EXPECT_EQ(result.At(0, "flag"), Cell(std::int64_t{1}));
  EXPECT_EQ(result.At(0, "ratio"), Cell(0.5));
  EXPECT_EQ(result.At(0, "guid"), Cell(std::string("6F9619FF-8B86-D011-B42D-00C04FC964FF")));
  EXPECT_EQ(result.At(1, "placed"), Cell(std::monostate{}));
  EXPECT_EQ(result.At(3, "__$operation"), Cell(std::int64_t{4}));
  EXPECT_EQ(result.At(3, "amount"), Cell(std::string("13.75")));
}

TEST_F(ChangeAnswersTest, ChangeRowsTakeTheColumnsAsNamedAndTheRangeAsGiven) {
  const RecordingReply reply =
      Run(ToRpcText(sql::ChangeRows("DBO_ORDERS", {"AMOUNT", "id"}, false)),
          Range(commits_[1], commits_[1]), "reader");
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(),
            (std::vector<std::string>{"__$start_lsn", "__$seqval", "__$operation",
                                      "tran_end_time", "AMOUNT", "id"}));
  ASSERT_EQ(result.rows.size(), 2u);  // the update's before and after images
  EXPECT_EQ(result.At(0, "__$operation"), Cell(std::int64_t{3}));
  EXPECT_EQ(result.At(0, "AMOUNT"), Cell(std::string("12.50")));
  EXPECT_EQ(result.At(1, "AMOUNT"), Cell(std::string("13.75")));
  EXPECT_EQ(result.At(1, "id"), Cell(std::int64_t{1}));

  EXPECT_TRUE(Run(ToRpcText(sql::ChangeRows("dbo_orders", {"id"}, true)),
                  Range(commits_[2].Increment(), Lsn::Parse("0xFFFFFFFFFFFFFFFFFFFF")))
                  .Only()
                  .rows.empty());
  EXPECT_TRUE(Run(ToRpcText(sql::ChangeRows("dbo_orders", {"id"}, true)),
                  {NullParam("@P1", "binary(10)"), LsnParam("@P2", commits_[2])})
                  .Only()
                  .rows.empty());
}

TEST_F(ChangeAnswersTest, ChangeRowsWithoutACommitEntryAreLeftOutAsTheJoinDoes) {
  db_->sqlite().Exec("DELETE FROM cdc_lsn_time_mapping WHERE start_lsn = x'" +
                     commits_[1].ToString().substr(2) + "'");
  const auto& result = Run(ToRpcText(sql::ChangeRows("dbo_orders", {"id"}, true)),
                           Range(Lsn(), commits_.back()))
                           .Only();
  ASSERT_EQ(result.rows.size(), 3u);
  for (const auto& row : result.rows) {
    EXPECT_NE(row.at(0), Cell(Bytes{LsnBytes(commits_[1])}));
  }
}

TEST_F(ChangeAnswersTest, ChangeRowsRefuseUnknownNamesAndUngrantedReads) {
  const auto range = Range(Lsn(), commits_.back());
  const RecordingReply table = Run(ToRpcText(sql::ChangeRows("dbo_nope", {"id"}, true)), range);
  ASSERT_TRUE(table.error);
  EXPECT_EQ(table.error->number, 208);
  EXPECT_EQ(table.error->message, "Invalid object name 'cdc.dbo_nope_CT'.");
  const RecordingReply column =
      Run(ToRpcText(sql::ChangeRows("dbo_orders", {"id", "wrong"}, true)), range);
  ASSERT_TRUE(column.error);
  EXPECT_EQ(column.error->number, 207);
  EXPECT_EQ(column.error->message, "Invalid column name 'wrong'.");
  const RecordingReply denied =
      Run(ToRpcText(sql::ChangeRows("sales_items", {"line"}, true)), range, "reader");
  ASSERT_TRUE(denied.error);
  EXPECT_EQ(denied.error->number, 229);
  EXPECT_EQ(denied.error->state, 5);
  EXPECT_EQ(denied.error->message,
            "The SELECT permission was denied on the object 'sales_items_CT', database 'shop', "
            "schema 'cdc'.");
  EXPECT_TRUE(denied.results.empty());
}

// Commits a transaction into the file in the middle of a read: after the first row.
class CommitOnFirstRow final : public tds::ReplyWriter, private tds::ResultSet {
 public:
  explicit CommitOnFirstRow(std::function<void()> commit) : commit_(std::move(commit)) {}
  tds::ResultSet& BeginResult(const std::vector<tds::ResultColumn>&) override { return *this; }
  void Info(std::int32_t, const std::string&) override {}
  void Fail(const tds::ServerError& e) override { error = e.message; }
  int rows = 0;
  std::string error;

 private:
  void Null() override {}
  void Int(std::int64_t) override {}
  void Float(double) override {}
  void Text(std::string_view) override {}
  void Binary(std::string_view) override {}
  bool TakesEncodedValues() const override { return false; }
  void EncodedValues(std::string_view, std::size_t) override {
    throw std::logic_error("EncodedValues on a reply that takes none");
  }
  void EndRow() override {
    if (rows++ == 0) commit_();
  }
  std::function<void()> commit_;
};

TEST_F(ChangeAnswersTest, AStatementReadsOneSnapshotWhileTheSimulatorCommits) {
  sim_server::SimQueryHandler handler(std::make_unique<Session>(
      db_->path(), "shop", sim::LoginInfo{"owner", true}, 60));
  CommitOnFirstRow reply([&] {
    auto txn = db_->Begin();
    txn->Insert(orders_, {{"id", 7}, {"region", "north"}});
    txn->Commit();
  });
  const std::string text = ToRpcText(sql::ChangeRows("dbo_orders", {"id"}, true));
  const auto everything = Range(Lsn(), Lsn::Parse("0xFFFFFFFFFFFFFFFFFFFF"));
  handler.Execute(tds::Statement{text, everything, true}, reply);
  EXPECT_EQ(reply.error, "");
  EXPECT_EQ(reply.rows, 5);
  // The next statement sees the commit.
  EXPECT_EQ(Run(text, everything).Only().rows.size(), 6u);
}

TEST_F(ChangeAnswersTest, AllChangesReturnsTheChangeTableColumns) {
  const std::string text = "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'all')";
  const Lsn min = db_->MinLsn("dbo_orders");
  const RecordingReply reply = Run(text, Range(min, commits_.back()), "reader");
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  std::vector<std::string> names = {"__$start_lsn", "__$seqval", "__$operation", "__$update_mask"};
  names.insert(names.end(), kAllColumns.begin(), kAllColumns.end());
  EXPECT_EQ(result.ColumnNames(), names);
  EXPECT_EQ(result.ColumnTypes()[3], "varbinary(128)");
  ASSERT_EQ(result.rows.size(), 4u);  // 'all' leaves out the before image
  for (const auto& row : result.rows) EXPECT_NE(row.at(2), Cell(std::int64_t{3}));
  const auto stored = db_->ChangeRows("dbo_orders");
  EXPECT_EQ(result.At(0, "__$update_mask"), Cell(Bytes{stored[0].update_mask}));

  const RecordingReply old = Run(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'all update old')",
      Range(min, commits_.back()));
  EXPECT_EQ(old.Only().rows.size(), 5u);
}

TEST_F(ChangeAnswersTest, AllChangesOutsideTheValidityIntervalFailsWith313) {
  const std::string text = "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'all')";
  const Lsn min = db_->MinLsn("dbo_orders");
  const Lsn max = *db_->MaxLsn();
  for (const auto& params : {Range(min.Decrement(), max), Range(min, max.Increment()),
                             Range(max, min), Range(Lsn(), max)}) {
    const RecordingReply reply = Run(text, params);
    ASSERT_TRUE(reply.error);
    EXPECT_EQ(reply.error->number, 313);
    EXPECT_EQ(reply.error->state, 3);
    EXPECT_EQ(reply.error->severity, 16);
    EXPECT_EQ(reply.error->message,
              "An insufficient number of arguments were supplied for the procedure or function "
              "cdc.fn_cdc_get_all_changes_ ...");
    EXPECT_TRUE(reply.results.empty());
  }
  EXPECT_EQ(Run("SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'net')",
                Range(min, max))
                .error->number,
            313);
  // After cleanup the interval starts later, and the old start fails.
  db_->AdvanceClock(3600'000'000);
  db_->WriteIdleEntry();
  db_->Cleanup(30);
  EXPECT_EQ(Run(text, Range(min, *db_->MaxLsn())).error->number, 313);
  EXPECT_FALSE(Run(text, Range(db_->MinLsn("dbo_orders"), *db_->MaxLsn())).error);

  const RecordingReply unknown =
      Run("SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_nope(@P1, @P2, N'all')", Range(min, max));
  EXPECT_EQ(unknown.error->number, 208);
  EXPECT_EQ(unknown.error->message, "Invalid object name 'cdc.fn_cdc_get_all_changes_dbo_nope'.");
  const RecordingReply denied = Run(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_sales_items(@P1, @P2, N'all')", Range(min, max),
      "reader");
  EXPECT_EQ(denied.error->number, 229);
}

TEST_F(ChangeAnswersTest, ALargeRangeStreams) {
  constexpr int kRows = 20'000;
  auto txn = db_->Begin();
  std::vector<sim::Row> rows;
  for (int i = 0; i < kRows; ++i) rows.push_back({{"line", 100 + i}, {"sku", "bulk"}});
  txn->InsertMany(items_, rows);
  const Lsn lsn = *txn->Commit().commit_lsn;
  const auto& result = Run(ToRpcText(sql::ChangeRows("sales_items", {"line", "sku", "qty"}, true)),
                           Range(lsn, lsn))
                           .Only();
  ASSERT_EQ(result.rows.size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(result.At(kRows - 1, "line"), Cell(std::int64_t{100 + kRows - 1}));
  EXPECT_EQ(result.At(kRows - 1, "__$command_id"), Cell(std::int64_t{kRows}));
}

}  // namespace
}  // namespace mssql_cdc::sim_server
