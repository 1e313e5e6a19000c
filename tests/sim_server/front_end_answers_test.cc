// Queries of no known shape, answered by the T-SQL front end (src/sim_server/tsql/): catalog
// views, change and source tables, joins, CTEs, window functions, the CDC and metadata
// functions, with SQL Server's types and errors. The statements are those real clients send
// (Debezium's SQL Server connector, Microsoft's JDBC driver), on the shop database.
#include <gtest/gtest.h>

#include "shop_fixture.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;

class FrontEndAnswersTest : public ShopFixture {
 protected:
  // The one result of `sql`: a header line of "name type" per column, then a line per row.
  std::string Table(const std::string& sql, const std::vector<tds::ParamValue>& params = {}) {
    const RecordingReply reply = Run(sql, params);
    if (reply.error) return "error " + std::to_string(reply.error->number) + ": " + reply.error->message;
    const auto& result = reply.Only();
    std::string text;
    const auto names = result.ColumnNames();
    const auto types = result.ColumnTypes();
    for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i] + " " + types[i];
    for (const auto& row : result.rows) {
      text += "\n";
      for (std::size_t i = 0; i < row.size(); ++i) text += (i ? " | " : "") + Render(row[i]);
    }
    return text;
  }
};

TEST_F(FrontEndAnswersTest, CatalogViews) {
  EXPECT_EQ(Table("SELECT name FROM sys.databases WHERE name = @P0", {TextParam("@P0", "SHOP")}),
            "name nvarchar(128)\nshop");
  EXPECT_EQ(Table("SELECT name, database_id, is_cdc_enabled FROM sys.databases ORDER BY database_id DESC"),
            "name nvarchar(128), database_id int, is_cdc_enabled bit\n"
            "shop | 5 | 1\nmsdb | 4 | 0\nmodel | 3 | 0\ntempdb | 2 | 0\nmaster | 1 | 0");
}

TEST_F(FrontEndAnswersTest, DebeziumsCatalogQueries) {
  // Its list of capture instances: a CTE with ROW_NUMBER over cdc.change_tables, and the
  // metadata functions with the database's id.
  EXPECT_EQ(Table("WITH ordered_change_tables AS (SELECT ROW_NUMBER() OVER (PARTITION BY "
                  "ct.source_object_id, ct.start_lsn ORDER BY ct.create_date DESC) AS ct_sequence, ct.* "
                  "FROM [shop].cdc.change_tables AS ct) SELECT OBJECT_SCHEMA_NAME(source_object_id, "
                  "DB_ID(@P0)), OBJECT_NAME(source_object_id, DB_ID(@P1)), capture_instance FROM "
                  "ordered_change_tables WHERE ct_sequence = 1 ORDER BY capture_instance",
                  {TextParam("@P0", "shop"), TextParam("@P1", "shop")}),
            " nvarchar(128),  nvarchar(128), capture_instance nvarchar(128)\n"
            "dbo | orders | dbo_orders\nsales | items | sales_items");
  EXPECT_EQ(Table("SELECT column_name, column_type, column_ordinal FROM [shop].cdc.captured_columns c "
                  "JOIN cdc.change_tables t ON t.object_id = c.object_id WHERE t.capture_instance = "
                  "'SALES_ITEMS' ORDER BY c.object_id, column_id"),
            "column_name nvarchar(128), column_type nvarchar(128), column_ordinal int\n"
            "line | int | 1\nsku | varchar | 2\nqty | smallint | 3");
  // The last transaction's LSN, and the nth from a position: idle entries (tran_id zero) are
  // not transactions, as SQL Server compares 0x00 with a zero binary(10).
  db_->WriteIdleEntry();
  const std::string last = Table("SELECT MAX(start_lsn) FROM [shop].cdc.lsn_time_mapping WHERE tran_id <> 0x00");
  EXPECT_EQ(last, " binary(10)\n" + Render(Bytes{LsnBytes(commits_[2])}));
  EXPECT_EQ(Table("SELECT MAX(start_lsn) FROM (SELECT TOP (@P0 + 1) start_lsn FROM [shop].cdc.lsn_time_mapping "
                  "WHERE start_lsn >= @P1 AND tran_id <> 0x00 ORDER BY start_lsn) as next_lsns",
                  {IntParam("@P0", 1), LsnParam("@P1", commits_[0])}),
            " binary(10)\n" + Render(Bytes{LsnBytes(commits_[1])}));
}

TEST_F(FrontEndAnswersTest, ChangeRowsThroughTheQueryFunctionAndTheChangeTable) {
  const std::string rows =
      Table("SELECT __$operation, id, region, amount, sys.fn_cdc_map_lsn_to_time(__$start_lsn) AS t FROM "
            "cdc.fn_cdc_get_all_changes_dbo_orders(sys.fn_cdc_get_min_lsn('dbo_orders'), sys.fn_cdc_get_max_lsn(), "
            "N'all update old') ORDER BY __$start_lsn, __$seqval, __$operation");
  EXPECT_EQ(rows,
            "__$operation int, id int, region nvarchar(20), amount decimal(18,2), t datetime\n"
            "2 | 1 | west | 12.50 | 2026-03-01 02:01:00.000\n"
            "2 | 2 | east | -3.00 | 2026-03-01 02:01:00.000\n"
            "3 | 1 | west | 12.50 | 2026-03-01 02:02:00.000\n"
            "4 | 1 | west | 13.75 | 2026-03-01 02:02:00.000\n"
            "1 | 2 | east | -3.00 | 2026-03-01 02:03:00.000");
  EXPECT_EQ(Table("SELECT COUNT(*) AS n, MIN(amount) AS low FROM cdc.dbo_orders_CT WHERE __$operation IN (1, 2)"),
            "n int, low decimal(18,2)\n3 | -3.00");
  EXPECT_EQ(Table("SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(0x00, 0x01, N'all')"),
            "error 313: An insufficient number of arguments were supplied for the procedure or function "
            "cdc.fn_cdc_get_all_changes_ ...");
}

TEST_F(FrontEndAnswersTest, SourceTablesStringsAndGrants) {
  EXPECT_EQ(Table("SELECT id, region FROM dbo.orders WHERE region = 'WEST  ' AND note IS NOT NULL"),
            "id int, region nvarchar(20)\n1 | west");
  EXPECT_EQ(Table("SELECT o.region + '/' + i.sku AS pair FROM dbo.orders o CROSS JOIN sales.items AS i"),
            "pair nvarchar(41)\nwest/sku-1");
  EXPECT_EQ(Run("SELECT id FROM dbo.orders", {}, "reader").error->number, 229);
  EXPECT_FALSE(Run("SELECT COUNT(*) FROM cdc.dbo_orders_CT", {}, "reader").error);
}

TEST_F(FrontEndAnswersTest, WhatDoesNotResolveFailsAsSqlServerDoes) {
  EXPECT_EQ(Table("SELECT nope FROM sys.databases"), "error 207: Invalid column name 'nope'.");
  EXPECT_EQ(Table("SELECT name FROM sys.nope"), "error 208: Invalid object name 'sys.nope'.");
  EXPECT_EQ(Table("SELECT object_id FROM cdc.change_tables a, cdc.captured_columns b"),
            "error 209: Ambiguous column name 'object_id'.");
  EXPECT_EQ(Table("SELECT x.name FROM sys.databases d"),
            "error 4104: The multi-part identifier \"x.name\" could not be bound.");
  EXPECT_EQ(Table("SELECT no_such_function(1)"), "error 195: 'no_such_function' is not a recognized built-in function name.");
  EXPECT_EQ(Table("SELECT name FROM sys.databases WHERE"), "error 102: Incorrect syntax near 'WHERE'.");
  EXPECT_EQ(Table("SELECT name FROM other.sys.databases"), "error 208: Invalid object name 'other.sys.databases'.");
}

}  // namespace
}  // namespace mssql_cdc::sim_server
