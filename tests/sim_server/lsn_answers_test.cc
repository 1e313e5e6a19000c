// Answers to the LSN and lsn_time_mapping statements of source/odbc/statements.h: LSN
// bounds (with what a login may not see), the n-th commit, commit times, split points.
#include <gtest/gtest.h>

#include "shop_fixture.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

class LsnAnswersTest : public ShopFixture {};

const std::string kZeroLsn(Lsn::kSize, '\0');

std::string OnlyValue(const RecordingReply& reply) {
  const auto& result = reply.Only();
  EXPECT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.columns.size(), 1u);
  return Render(result.rows.at(0).at(0));
}

TEST_F(LsnAnswersTest, MaxLsnIsOneUnnamedBinaryColumn) {
  const RecordingReply reply = Run(std::string(sql::kMaxLsn));
  ASSERT_FALSE(reply.error);
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(), std::vector<std::string>{""});
  EXPECT_EQ(result.ColumnTypes(), std::vector<std::string>{"binary(10)"});
  EXPECT_EQ(result.rows.at(0).at(0), Cell(Bytes{LsnBytes(*db_->MaxLsn())}));
  EXPECT_EQ(*db_->MaxLsn(), commits_.back());
}

TEST_F(LsnAnswersTest, MaxLsnIsNullWhileLsnTimeMappingIsEmpty) {
  db_->sqlite().Exec("DELETE FROM cdc_lsn_time_mapping");
  EXPECT_EQ(OnlyValue(Run(std::string(sql::kMaxLsn))), "NULL");
}

TEST_F(LsnAnswersTest, MinLsnIsZeroForUnknownInstancesAndThoseTheLoginMayNotRead) {
  const std::string text = ToRpcText(sql::kMinLsn);
  auto min = [&](const std::string& instance, const std::string& login) {
    const RecordingReply reply = Run(text, {TextParam("@P1", instance)}, login);
    EXPECT_FALSE(reply.error);
    return std::get<Bytes>(reply.Only().rows.at(0).at(0)).value;
  };
  EXPECT_EQ(min("dbo_orders", "owner"), LsnBytes(db_->MinLsn("dbo_orders")));
  EXPECT_EQ(min("DBO_ORDERS", "owner"), LsnBytes(db_->MinLsn("dbo_orders")));
  EXPECT_EQ(min("sales_items", "owner"), LsnBytes(db_->MinLsn("sales_items")));
  EXPECT_EQ(min("dbo_orders", "reader"), LsnBytes(db_->MinLsn("dbo_orders")));
  EXPECT_EQ(min("sales_items", "reader"), kZeroLsn);
  EXPECT_EQ(min("dbo_orders", "nobody"), kZeroLsn);
  EXPECT_EQ(min("no_such", "owner"), kZeroLsn);
  EXPECT_FALSE(db_->MinLsn("dbo_orders").IsZero());
  // A grant given while the connection is open counts from the next statement.
  db_->Grant("nobody", "cdc.dbo_orders_CT");
  EXPECT_EQ(min("dbo_orders", "nobody"), LsnBytes(db_->MinLsn("dbo_orders")));
}

TEST_F(LsnAnswersTest, NthCommitAfterCountsEveryMappingEntry) {
  const auto mapping = db_->LsnTimeMapping();
  ASSERT_EQ(mapping.size(), 5u);  // two enables, three commits
  const std::string text = ToRpcText(sql::kNthCommitAfter);
  auto nth = [&](std::int64_t n, const Lsn& after) {
    return OnlyValue(Run(text, {IntParam("@P1", n), LsnParam("@P2", after)}));
  };
  EXPECT_EQ(nth(1, mapping[0].start_lsn), mapping[1].start_lsn.ToString());
  EXPECT_EQ(nth(3, mapping[0].start_lsn), mapping[3].start_lsn.ToString());
  EXPECT_EQ(nth(100, mapping[0].start_lsn), mapping[4].start_lsn.ToString());
  EXPECT_EQ(nth(1, mapping[4].start_lsn), "NULL");
  EXPECT_EQ(nth(0, mapping[0].start_lsn), "NULL");
  const RecordingReply negative = Run(text, {IntParam("@P1", -1), LsnParam("@P2", Lsn())});
  ASSERT_TRUE(negative.error);
  EXPECT_EQ(negative.error->number, 1014);
}

TEST_F(LsnAnswersTest, CommitTimesAreTheServersLocalDatetime) {
  const auto mapping = db_->LsnTimeMapping();
  const RecordingReply exact = Run(ToRpcText(sql::kCommitTime), {LsnParam("@P1", commits_[1])});
  const auto& result = exact.Only();
  EXPECT_EQ(result.ColumnNames(), std::vector<std::string>{"tran_end_time"});
  EXPECT_EQ(result.ColumnTypes(), std::vector<std::string>{"datetime"});
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(mapping[3].start_lsn, commits_[1]);
  EXPECT_EQ(result.Text(0, "tran_end_time"), mapping[3].tran_end_time);
  EXPECT_EQ(mapping[3].tran_end_time, "2026-03-01 02:02:00.000");  // UTC-8 in March

  EXPECT_TRUE(Run(ToRpcText(sql::kCommitTime), {LsnParam("@P1", commits_[1].Increment())})
                  .Only()
                  .rows.empty());
  const RecordingReply before = Run(ToRpcText(sql::kCommitTimeAtOrBefore),
                                    {LsnParam("@P1", commits_[1].Increment())});
  EXPECT_EQ(before.Only().Text(0, "tran_end_time"), mapping[3].tran_end_time);
  EXPECT_TRUE(Run(ToRpcText(sql::kCommitTimeAtOrBefore), {LsnParam("@P1", Lsn())})
                  .Only()
                  .rows.empty());
}

TEST_F(LsnAnswersTest, SplitPointsTileTheChangeRowsOfARange) {
  const RecordingReply reply =
      Run(ToRpcText(sql::SplitPoints("dbo_orders", 2)), Range(Lsn(), commits_.back()));
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(), (std::vector<std::string>{"b", "n", "r"}));
  EXPECT_EQ(result.ColumnTypes(), (std::vector<std::string>{"binary(10)", "binary(10)", "bigint"}));
  // Five change rows: two inserts, an update's two images, a delete.
  ASSERT_EQ(result.rows.size(), 2u);
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    rows += std::get<std::int64_t>(result.At(i, "r"));
    const Lsn bound = Lsn::Parse(result.Text(i, "b"));
    EXPECT_EQ(result.Text(i, "n"), bound.Increment().ToString());
  }
  EXPECT_EQ(rows, 5);
  EXPECT_EQ(result.Text(1, "b"), commits_[2].ToString());

  EXPECT_TRUE(Run(ToRpcText(sql::SplitPoints("dbo_orders", 4)),
                  {LsnParam("@P1", Lsn()), NullParam("@P2", "binary(10)")})
                  .Only()
                  .rows.empty());
}

TEST_F(LsnAnswersTest, SplitPointsNeedTheChangeTableAndTheRightToReadIt) {
  const RecordingReply unknown =
      Run(ToRpcText(sql::SplitPoints("dbo_nope", 2)), Range(Lsn(), commits_.back()));
  ASSERT_TRUE(unknown.error);
  EXPECT_EQ(unknown.error->number, 208);
  EXPECT_EQ(unknown.error->message, "Invalid object name 'cdc.dbo_nope_CT'.");
  const RecordingReply denied =
      Run(ToRpcText(sql::SplitPoints("sales_items", 2)), Range(Lsn(), commits_.back()), "reader");
  ASSERT_TRUE(denied.error);
  EXPECT_EQ(denied.error->number, 229);
  EXPECT_EQ(denied.error->severity, 14);
  EXPECT_EQ(denied.error->message,
            "The SELECT permission was denied on the object 'sales_items_CT', database 'shop', "
            "schema 'cdc'.");
  EXPECT_TRUE(denied.results.empty());
}

TEST_F(LsnAnswersTest, IncrementAndDecrementLsn) {
  EXPECT_EQ(OnlyValue(Run("SELECT sys.fn_cdc_increment_lsn(?)", {LsnParam("", commits_[0])})),
            commits_[0].Increment().ToString());
  EXPECT_EQ(OnlyValue(Run("SELECT sys.fn_cdc_decrement_lsn(0x0000000000000000000A)")),
            "0x00000000000000000009");
}

}  // namespace
}  // namespace mssql_cdc::sim_server
