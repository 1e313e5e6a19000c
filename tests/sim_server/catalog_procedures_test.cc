// sp_tables, sp_pkeys and sp_statistics_100 as Microsoft's JDBC driver calls them for
// DatabaseMetaData (getTables, getPrimaryKeys, getIndexInfo), and the LIKE patterns they match
// names with.
#include <gtest/gtest.h>

#include "shop_fixture.h"
#include "sim_server/like_pattern.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;

TEST(LikePatternTest, PercentUnderscoreAndSetsIgnoringCase) {
  EXPECT_TRUE(LikeMatches("%", ""));
  EXPECT_TRUE(LikeMatches("ord%", "Orders"));
  EXPECT_TRUE(LikeMatches("o_ders", "orders"));
  EXPECT_FALSE(LikeMatches("o_ders", "oders"));
  EXPECT_TRUE(LikeMatches("my[_]name", "my_name"));
  EXPECT_FALSE(LikeMatches("my[_]name", "myXname"));
  EXPECT_TRUE(LikeMatches("[a-c]x", "Bx"));
  EXPECT_FALSE(LikeMatches("[^a-c]x", "bx"));
  EXPECT_TRUE(LikeMatches("%s%", "sales"));
  EXPECT_TRUE(LikeMatches("a[b", "a[b"));  // an unclosed bracket is itself
  EXPECT_FALSE(LikeMatches("orders", "orders2"));
}

class CatalogProceduresTest : public ShopFixture {
 protected:
  std::string Rows(const std::string& sql, const std::vector<tds::ParamValue>& params = {},
                   const std::string& login = "owner") {
    const RecordingReply reply = Run(sql, params, login);
    if (reply.error) return "error " + std::to_string(reply.error->number) + ": " + reply.error->message;
    std::string text;
    for (const auto& row : reply.Only().rows) {
      for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "|" : "") + Render(row[i]);
      text += "\n";
    }
    return text;
  }
  static tds::ParamValue Null(const std::string& name) {
    tds::ParamValue p;
    p.name = name;
    p.type = SqlType::Parse("nvarchar(4000)");
    return p;
  }
};

TEST_F(CatalogProceduresTest, TablesAsGetTablesAsksForThem) {
  // getTables(null, null, "%", {"TABLE"}): the driver's quoted type list.
  const std::vector<tds::ParamValue> all = {TextParam("@P0", "%"), Null("@P1"), Null("@P2"),
                                            TextParam("@P3", "'''TABLE'''")};
  EXPECT_EQ(Rows("EXEC sp_tables  @P0 ,  @P1 ,  @P2 ,  @P3 ", all),
            "shop|dbo|orders|TABLE|NULL\nshop|sales|items|TABLE|NULL\n");
  EXPECT_EQ(Run("EXEC sp_tables  @P0 ,  @P1 ,  @P2 ,  @P3 ", all).Only().ColumnTypes().at(3), "varchar(32)");
  EXPECT_EQ(Rows("EXEC sp_tables @table_name = 'ITEM_', @table_owner = 'sales'"), "shop|sales|items|TABLE|NULL\n");
  EXPECT_EQ(Rows("EXEC sp_tables 'orders', 'dbo', 'shop', '''VIEW'''"), "");
  // A login sees the tables it may read.
  EXPECT_EQ(Rows("EXEC sp_tables", {}, "reader"), "");
  EXPECT_EQ(Rows("EXEC sp_tables 'orders', 'dbo', 'other'"),
            "error 15250: The database name component of the object qualifier must be the name of the "
            "current database.");
  EXPECT_EQ(Rows("EXEC sp_tables @nope = 1"), "error 8145: @nope is not a parameter for procedure sp_tables.");
}

TEST_F(CatalogProceduresTest, PrimaryKeysAndTheirIndex) {
  EXPECT_EQ(Rows("EXEC sp_pkeys  @P0 ,  @P1 ,  @P2 ",
                 {TextParam("@P0", "orders"), TextParam("@P1", "dbo"), TextParam("@P2", "shop")}),
            "shop|dbo|orders|id|1|PK_orders\nshop|dbo|orders|region|2|PK_orders\n");
  EXPECT_EQ(Rows("EXEC sp_pkeys 'ord%', 'dbo'"), "");  // no patterns
  EXPECT_EQ(Rows("EXEC sp_pkeys 'items'"), "");          // dbo by default
  // getIndexInfo(..., unique = true, approximate = true): the table's row, then the key.
  EXPECT_EQ(Rows("EXEC sp_statistics_100  @P0 , @P1 , @P2 , @P3 , @P4 ,  @P5 ",
                 {TextParam("@P0", "items"), TextParam("@P1", "sales"), TextParam("@P2", "shop"),
                  TextParam("@P3", "%"), TextParam("@P4", "Y"), TextParam("@P5", "Q")}),
            "shop|sales|items|NULL|NULL|NULL|0|NULL|NULL|NULL|1|NULL|NULL\n"
            "shop|sales|items|0|items|PK_items|1|1|line|A|1|NULL|NULL\n");
}

// The batch mssql-jdbc 12.4.2 sends for DatabaseMetaData.getColumns, as it sends it.
constexpr const char* kGetColumns =
    "DECLARE @mssqljdbc_temp_sp_columns_result TABLE(TABLE_QUALIFIER SYSNAME, TABLE_OWNER SYSNAME,TABLE_NAME "
    "SYSNAME, COLUMN_NAME SYSNAME, DATA_TYPE SMALLINT, TYPE_NAME SYSNAME, PRECISION INT,LENGTH INT, SCALE "
    "SMALLINT, RADIX SMALLINT, NULLABLE SMALLINT, REMARKS VARCHAR(254), COLUMN_DEF NVARCHAR(4000),SQL_DATA_TYPE "
    "SMALLINT, SQL_DATETIME_SUB SMALLINT, CHAR_OCTET_LENGTH INT, ORDINAL_POSITION INT,IS_NULLABLE VARCHAR(254), "
    "SS_IS_SPARSE SMALLINT, SS_IS_COLUMN_SET SMALLINT, SS_IS_COMPUTED SMALLINT,SS_IS_IDENTITY SMALLINT, "
    "SS_UDT_CATALOG_NAME NVARCHAR(128), SS_UDT_SCHEMA_NAME NVARCHAR(128),SS_UDT_ASSEMBLY_TYPE_NAME NVARCHAR(max), "
    "SS_XML_SCHEMACOLLECTION_CATALOG_NAME NVARCHAR(128),SS_XML_SCHEMACOLLECTION_SCHEMA_NAME NVARCHAR(128), "
    "SS_XML_SCHEMACOLLECTION_NAME NVARCHAR(128),SS_DATA_TYPE TINYINT);INSERT INTO "
    "@mssqljdbc_temp_sp_columns_result EXEC sp_columns_100  @P0 , @P1 , @P2 , @P3 , @P4 , @P5 ;SELECT "
    "TABLE_QUALIFIER AS TABLE_CAT, TABLE_OWNER AS TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, DATA_TYPE,TYPE_NAME, "
    "PRECISION AS COLUMN_SIZE, LENGTH AS BUFFER_LENGTH, SCALE AS DECIMAL_DIGITS, RADIX AS NUM_PREC_RADIX,NULLABLE, "
    "REMARKS, COLUMN_DEF, SQL_DATA_TYPE, SQL_DATETIME_SUB, CHAR_OCTET_LENGTH, ORDINAL_POSITION, IS_NULLABLE,NULL "
    "AS SCOPE_CATALOG, NULL AS SCOPE_SCHEMA, NULL AS SCOPE_TABLE, SS_DATA_TYPE AS SOURCE_DATA_TYPE,CASE "
    "SS_IS_IDENTITY WHEN 0 THEN 'NO' WHEN 1 THEN 'YES' WHEN '' THEN '' END AS IS_AUTOINCREMENT,CASE SS_IS_COMPUTED "
    "WHEN 0 THEN 'NO' WHEN 1 THEN 'YES' WHEN '' THEN '' END AS IS_GENERATEDCOLUMN, SS_IS_SPARSE, SS_IS_COLUMN_SET, "
    "SS_UDT_CATALOG_NAME, SS_UDT_SCHEMA_NAME, SS_UDT_ASSEMBLY_TYPE_NAME,SS_XML_SCHEMACOLLECTION_CATALOG_NAME, "
    "SS_XML_SCHEMACOLLECTION_SCHEMA_NAME, SS_XML_SCHEMACOLLECTION_NAME FROM @mssqljdbc_temp_sp_columns_result "
    "ORDER BY TABLE_CAT, TABLE_SCHEM, TABLE_NAME, ORDINAL_POSITION;";

TEST_F(CatalogProceduresTest, ColumnsThroughTheJdbcDriversTableVariable) {
  const std::vector<tds::ParamValue> orders = {TextParam("@P0", "orders"), TextParam("@P1", "dbo"),
                                               TextParam("@P2", "shop"), TextParam("@P3", "%"),
                                               IntParam("@P4", 2), IntParam("@P5", 3)};
  const RecordingReply reply = Run(kGetColumns, orders);
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  ASSERT_EQ(result.columns.size(), 32u);
  EXPECT_EQ(result.columns[4].name, "DATA_TYPE");
  EXPECT_EQ(result.ColumnTypes()[4], "smallint");
  EXPECT_EQ(result.ColumnTypes()[21], "tinyint");  // SOURCE_DATA_TYPE
  // name | DATA_TYPE | TYPE_NAME | COLUMN_SIZE | BUFFER_LENGTH | DECIMAL_DIGITS | RADIX | NULLABLE |
  // ORDINAL_POSITION | IS_NULLABLE | SOURCE_DATA_TYPE | IS_AUTOINCREMENT
  std::string rows;
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    for (const char* column : {"COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "BUFFER_LENGTH",
                               "DECIMAL_DIGITS", "NUM_PREC_RADIX", "NULLABLE", "ORDINAL_POSITION", "IS_NULLABLE",
                               "SOURCE_DATA_TYPE", "IS_AUTOINCREMENT"}) {
      rows += result.Text(r, column) + (std::string(column) == "IS_AUTOINCREMENT" ? "\n" : "|");
    }
  }
  EXPECT_EQ(rows,
            "id|4|int|10|4|0|10|0|1|NO|56|NO\n"
            "region|-9|nvarchar|20|40|NULL|NULL|0|2|NO|NULL|NO\n"
            "amount|3|decimal|18|20|2|10|1|3|YES|NULL|NO\n"
            "placed|93|datetime2|23|16|3|NULL|1|4|YES|0|NO\n"
            "note|-9|nvarchar|0|0|NULL|NULL|1|5|YES|NULL|NO\n"
            "raw|-3|varbinary|16|16|NULL|NULL|1|6|YES|NULL|NO\n"
            "flag|-7|bit|1|1|NULL|NULL|1|7|YES|NULL|NO\n"
            "ratio|6|float|53|8|NULL|2|1|8|YES|NULL|NO\n"
            "guid|-11|uniqueidentifier|36|16|NULL|NULL|1|9|YES|NULL|NO\n");
  // The variable lived for its batch only.
  EXPECT_EQ(Rows("SELECT COLUMN_NAME FROM @mssqljdbc_temp_sp_columns_result"),
            "error 1087: Must declare the table variable \"@mssqljdbc_temp_sp_columns_result\".");
  // Patterns on the table and the column.
  const std::vector<tds::ParamValue> items = {TextParam("@P0", "ite_s"), TextParam("@P1", "%"),
                                              TextParam("@P2", "shop"), TextParam("@P3", "[lq]%"),
                                              IntParam("@P4", 2), IntParam("@P5", 3)};
  const RecordingReply filtered = Run(kGetColumns, items);
  ASSERT_FALSE(filtered.error) << filtered.error->message;
  ASSERT_EQ(filtered.Only().rows.size(), 2u);
  EXPECT_EQ(filtered.Only().Text(1, "COLUMN_NAME"), "qty");
  EXPECT_EQ(filtered.Only().Text(1, "ORDINAL_POSITION"), "3");
}

TEST_F(CatalogProceduresTest, TableVariablesRefuseWhatSqlServerRefuses) {
  EXPECT_EQ(Rows("DECLARE @t TABLE(a int); DECLARE @T TABLE(b int)"),
            "error 134: The variable name '@T' has already been declared. Variable names must be unique within a "
            "query batch or stored procedure.");
  EXPECT_EQ(Rows("DECLARE @t TABLE(a int); INSERT INTO @t EXEC sp_pkeys 'orders'"),
            "error 213: Column name or number of supplied values does not match table definition.");
  EXPECT_EQ(Rows("INSERT INTO @nope EXEC sp_pkeys 'orders'"),
            "error 1087: Must declare the table variable \"@nope\".");
  EXPECT_EQ(Rows("DECLARE @k TABLE(q sysname, o sysname, t sysname, c sysname, s smallint, n sysname); "
                 "INSERT @k EXEC sp_pkeys 'orders'; SELECT c, s FROM @k ORDER BY s DESC"),
            "region|2\nid|1\n");
}

}  // namespace
}  // namespace mssql_cdc::sim_server
