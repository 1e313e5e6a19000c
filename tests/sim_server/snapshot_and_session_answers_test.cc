// Answers to snapshot reads (current rows in key order, casts for absent columns, grants on
// the source table), to what drivers send on their own, and to statements of no known shape
// that the T-SQL front end cannot read either, which fail with 208 or 102 and never succeed
// empty.
#include <gtest/gtest.h>

#include "shop_fixture.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

class SnapshotAndSessionAnswersTest : public ShopFixture {};

std::vector<sql::SnapshotColumn> SnapshotColumns() {
  return {{"region", SqlType::Parse("nvarchar(20)"), true},
          {"ID", SqlType::Parse("int"), true},
          {"gone", SqlType::Parse("decimal(9,3)"), false},
          {"amount", SqlType::Parse("decimal(18,2)"), true},
          {"guid", SqlType::Parse("uniqueidentifier"), true}};
}

TEST_F(SnapshotAndSessionAnswersTest, SnapshotRowsInKeyOrderWithCastsForAbsentColumns) {
  auto txn = db_->Begin();
  txn->Insert(orders_, {{"id", 0}, {"region", "zulu"}, {"amount", "1.00"}});
  txn->Insert(orders_, {{"id", 1}, {"region", "alpha"}});
  txn->Commit();
  const std::string text =
      sql::SnapshotRows("dbo", "orders", SnapshotColumns(), {"id", "region"}, true, 10000);
  const RecordingReply reply = Run(text, {}, "owner");
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();  // the SET prefixes answer nothing
  EXPECT_EQ(result.ColumnNames(),
            (std::vector<std::string>{"region", "ID", "gone", "amount", "guid"}));
  EXPECT_EQ(result.ColumnTypes(),
            (std::vector<std::string>{"nvarchar(20)", "int", "decimal(9,3)", "decimal(18,2)",
                                      "uniqueidentifier"}));
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(Render(result.rows[0][1]) + Render(result.rows[0][0]), "0zulu");
  EXPECT_EQ(Render(result.rows[1][1]) + Render(result.rows[1][0]), "1alpha");
  EXPECT_EQ(Render(result.rows[2][1]) + Render(result.rows[2][0]), "1west");
  EXPECT_EQ(result.Text(2, "amount"), "13.75");
  EXPECT_EQ(result.Text(2, "guid"), "6F9619FF-8B86-D011-B42D-00C04FC964FF");
  for (const auto& row : result.rows) EXPECT_EQ(Render(row[2]), "NULL");
}

TEST_F(SnapshotAndSessionAnswersTest, SnapshotRowsNeedTheTableItsColumnsAndAGrant) {
  const auto columns = SnapshotColumns();
  const RecordingReply denied = Run(sql::SnapshotRows("dbo", "orders", columns, {"id"}, false, -1),
                                    {}, "reader");
  ASSERT_TRUE(denied.error);
  EXPECT_EQ(denied.error->number, 229);
  EXPECT_EQ(denied.error->message,
            "The SELECT permission was denied on the object 'orders', database 'shop', schema "
            "'dbo'.");
  db_->Grant("reader", "dbo.orders");
  EXPECT_FALSE(Run(sql::SnapshotRows("dbo", "orders", columns, {"id"}, false, -1), {}, "reader").error);

  const RecordingReply table = Run(sql::SnapshotRows("dbo", "missing", columns, {"id"}, false, -1));
  EXPECT_EQ(table.error->number, 208);
  EXPECT_EQ(table.error->message, "Invalid object name 'dbo.missing'.");
  const RecordingReply key = Run(sql::SnapshotRows("dbo", "orders", columns, {"nope"}, false, -1));
  EXPECT_EQ(key.error->number, 207);
  auto with_gone = columns;
  with_gone[2].present = true;
  EXPECT_EQ(Run(sql::SnapshotRows("dbo", "orders", with_gone, {"id"}, false, -1)).error->message,
            "Invalid column name 'gone'.");
}

TEST_F(SnapshotAndSessionAnswersTest, WhatDriversSendOnTheirOwn) {
  const RecordingReply set = Run("SET TEXTSIZE 2147483647; SET ANSI_WARNINGS ON");
  EXPECT_FALSE(set.error);
  EXPECT_TRUE(set.results.empty());

  const RecordingReply use = Run("USE [SHOP]");
  EXPECT_FALSE(use.error);
  ASSERT_EQ(use.infos.size(), 1u);
  EXPECT_EQ(use.infos[0].first, 5701);
  EXPECT_EQ(use.infos[0].second, "Changed database context to 'shop'.");
  EXPECT_EQ(Run("USE master").error->number, 911);

  EXPECT_EQ(Render(Run("SELECT @@SPID").Only().rows.at(0).at(0)), "51");
  EXPECT_EQ(Run("SELECT @@SPID").Only().ColumnTypes(), std::vector<std::string>{"smallint"});
  EXPECT_EQ(Render(Run("select 1").Only().rows.at(0).at(0)), "1");
  EXPECT_NE(Render(Run("SELECT @@VERSION").Only().rows.at(0).at(0)).find("Microsoft SQL Server"),
            std::string::npos);
  EXPECT_EQ(Render(Run("SELECT SERVERPROPERTY('ProductMajorVersion')").Only().rows.at(0).at(0)),
            "16");
  EXPECT_EQ(Render(Run("SELECT SERVERPROPERTY('NoSuchProperty')").Only().rows.at(0).at(0)),
            "NULL");
  EXPECT_EQ(Render(Run("SELECT DB_NAME()").Only().rows.at(0).at(0)), "shop");
  const RecordingReply types = Run("exec sp_datatype_info_100 @data_type = 0, @ODBCVer = 3");
  EXPECT_EQ(types.Only().columns.at(0).name, "TYPE_NAME");
}

// @@TRANCOUNT after `sql` on the owner's connection.
#define EXPECT_TRANCOUNT_AFTER(sql, expected)                                              \
  do {                                                                                     \
    const RecordingReply run = Run(sql);                                                   \
    ASSERT_FALSE(run.error) << (sql) << ": " << run.error->message;                        \
    EXPECT_EQ(Render(Run("SELECT @@TRANCOUNT").Only().rows.at(0).at(0)), expected) << (sql); \
  } while (false)

TEST_F(SnapshotAndSessionAnswersTest, TransactionsAsMicrosoftsJdbcDriverSendsThem) {
  EXPECT_EQ(Run("SELECT @@TRANCOUNT").Only().ColumnTypes(), std::vector<std::string>{"int"});
  // Autocommit: commit and rollback with nothing open do nothing.
  EXPECT_TRANCOUNT_AFTER("IF @@TRANCOUNT > 0 COMMIT TRAN", "0");
  EXPECT_TRANCOUNT_AFTER("IF @@TRANCOUNT > 0 ROLLBACK TRAN", "0");
  // setAutoCommit(false), then a savepoint: BEGIN TRAN under implicit transactions opens two.
  EXPECT_TRANCOUNT_AFTER("set implicit_transactions on ", "0");
  EXPECT_TRANCOUNT_AFTER(
      "IF @@TRANCOUNT = 0 BEGIN BEGIN TRAN IF @@TRANCOUNT = 2 COMMIT TRAN END SAVE TRAN [sp1]",
      "1");
  EXPECT_TRANCOUNT_AFTER("ROLLBACK TRAN sp1", "1");
  EXPECT_TRANCOUNT_AFTER("rollback transaction [sp1]", "1");  // the savepoint stays
  EXPECT_TRANCOUNT_AFTER("IF @@TRANCOUNT > 0 ROLLBACK TRAN", "0");
  // A read of a table opens one under implicit transactions; SELECT 1 does not.
  EXPECT_TRANCOUNT_AFTER("SELECT 1", "0");
  EXPECT_TRANCOUNT_AFTER("EXEC sys.sp_cdc_help_change_data_capture", "1");
  // setAutoCommit(true): the commit follows the SET in one batch, no `;` between.
  EXPECT_TRANCOUNT_AFTER("set implicit_transactions off IF @@TRANCOUNT > 0 COMMIT TRAN ", "0");
  EXPECT_TRANCOUNT_AFTER("EXEC sys.sp_cdc_help_change_data_capture", "0");
  EXPECT_TRANCOUNT_AFTER("BEGIN TRANSACTION outer_tx; BEGIN TRAN; COMMIT", "1");
  EXPECT_TRANCOUNT_AFTER("IF @@TRANCOUNT <> 1 COMMIT ELSE BEGIN SAVE TRANSACTION s2 END", "1");
  EXPECT_TRANCOUNT_AFTER("ROLLBACK TRAN outer_tx", "0");
  EXPECT_TRANCOUNT_AFTER("SET NOCOUNT ON SELECT @@TRANCOUNT", "0");
}

TEST_F(SnapshotAndSessionAnswersTest, TransactionStatementsWithNothingOpenFailAsSqlServerDoes) {
  const RecordingReply commit = Run("COMMIT TRAN");
  ASSERT_TRUE(commit.error);
  EXPECT_EQ(commit.error->number, 3902);
  EXPECT_EQ(commit.error->message,
            "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.");
  EXPECT_EQ(Run("ROLLBACK").error->number, 3903);
  EXPECT_EQ(Run("SAVE TRAN s").error->number, 628);
  const RecordingReply unknown = Run("BEGIN TRAN t; ROLLBACK TRAN T");
  ASSERT_TRUE(unknown.error);  // names compare exactly
  EXPECT_EQ(unknown.error->number, 6401);
  EXPECT_EQ(unknown.error->message,
            "Cannot roll back T. No transaction or savepoint of that name was found.");
  EXPECT_TRANCOUNT_AFTER("ROLLBACK TRAN t", "0");
  // What is not a control statement is not taken for one.
  EXPECT_EQ(Run("SET @x = 1").error->number, 102);
  EXPECT_EQ(Run("SET IMPLICIT_TRANSACTIONS MAYBE").error->number, 102);
  EXPECT_EQ(Run("IF @@TRANCOUNT > 0 DROP TABLE dbo.orders").error->number, 102);
  EXPECT_EQ(Run("SET NOCOUNT ON DROP TABLE dbo.orders").error->message,
            "Incorrect syntax near 'DROP'.");
}

TEST_F(SnapshotAndSessionAnswersTest, StatementsOfNoKnownShapeFail) {
  const RecordingReply missing = Run("SELECT * FROM cdc.nope_CT");
  ASSERT_TRUE(missing.error);
  EXPECT_EQ(missing.error->number, 208);
  EXPECT_EQ(missing.error->message, "Invalid object name 'cdc.nope_CT'.");
  EXPECT_EQ(Run("SELECT count(*) FROM dbo.missing").error->message,
            "Invalid object name 'dbo.missing'.");

  // Queries of no known shape are the front end's (front_end_answers_test.cc); what it cannot
  // read either fails as before.
  EXPECT_FALSE(Run("SELECT * FROM cdc.dbo_orders_CT").error);
  const RecordingReply apply = Run("SELECT * FROM cdc.dbo_orders_CT CROSS APPLY sys.tables");
  ASSERT_TRUE(apply.error);
  EXPECT_EQ(apply.error->number, 102);
  EXPECT_EQ(apply.error->severity, 15);
  EXPECT_EQ(Run("DROP TABLE dbo.orders").error->message, "Incorrect syntax near 'DROP'.");
  EXPECT_EQ(Run("SELECT * FROM cdc.fn_cdc_get_net_changes_dbo_nope(0x01, 0x02, 'all')")
                .error->message,
            "Invalid object name 'cdc.fn_cdc_get_net_changes_dbo_nope'.");
  EXPECT_EQ(Run("SELECT 'unclosed").error->number, 105);
  // A batch stops at its first error; what came before it was answered.
  const RecordingReply batch = Run("SELECT 1; SELEC 2; SELECT 3");
  EXPECT_EQ(batch.results.size(), 1u);
  EXPECT_EQ(batch.error->number, 102);
}

}  // namespace
}  // namespace mssql_cdc::sim_server
