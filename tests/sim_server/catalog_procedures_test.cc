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

}  // namespace
}  // namespace mssql_cdc::sim_server
