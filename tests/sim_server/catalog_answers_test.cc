// Answers to the catalog statements: sp_cdc_help_change_data_capture,
// sp_cdc_get_captured_columns (from whose type columns a client rebuilds each column's exact
// type), sp_cdc_get_ddl_history, sys.columns, USER_NAME() and the server's time zone.
#include <gtest/gtest.h>

#include "shop_fixture.h"
#include "sim_server/column_facts.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

class CatalogAnswersTest : public ShopFixture {};

// What a client does with a row of sp_cdc_get_captured_columns: the type from data_type and
// the column's length, precision and scale.
SqlType Rebuilt(const std::string& data_type, const ColumnFacts& facts) {
  SqlType type = SqlType::Parse(data_type);
  const std::string& n = type.name;
  if (n == "char" || n == "varchar" || n == "nchar" || n == "nvarchar" || n == "binary" ||
      n == "varbinary") {
    type.max_length = *facts.character_maximum_length;
  }
  if (n == "decimal" || n == "numeric") {
    type.precision = *facts.numeric_precision;
    type.scale = *facts.numeric_scale;
  }
  if (n == "float") type.max_length = *facts.numeric_precision;
  if (n == "time" || n == "datetime2" || n == "datetimeoffset") type.scale = *facts.datetime_precision;
  return type;
}

std::optional<int> IntOrNull(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return std::nullopt;
  return static_cast<int>(std::get<std::int64_t>(cell));
}

TEST_F(CatalogAnswersTest, HelpChangeDataCaptureListsWhatTheLoginMayRead) {
  const RecordingReply reply = Run(std::string(sql::kListCaptureInstances));
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(),
            (std::vector<std::string>{"source_schema", "source_table", "capture_instance",
                                      "object_id", "source_object_id", "start_lsn", "end_lsn",
                                      "supports_net_changes", "has_drop_pending", "role_name",
                                      "index_name", "filegroup_name", "create_date",
                                      "index_column_list", "captured_column_list"}));
  EXPECT_EQ(result.ColumnTypes(),
            (std::vector<std::string>{"nvarchar(128)", "nvarchar(128)", "nvarchar(128)", "int",
                                      "int", "binary(10)", "binary(10)", "bit", "bit",
                                      "nvarchar(128)", "nvarchar(128)", "nvarchar(128)",
                                      "datetime", "nvarchar(max)", "nvarchar(max)"}));
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.Text(0, "capture_instance"), "dbo_orders");
  EXPECT_EQ(result.Text(0, "source_schema"), "dbo");
  EXPECT_EQ(result.Text(0, "source_table"), "orders");
  EXPECT_EQ(result.Text(0, "start_lsn"), db_->MinLsn("dbo_orders").ToString());
  EXPECT_EQ(result.Text(0, "end_lsn"), "NULL");
  EXPECT_EQ(result.Text(0, "index_column_list"), "[id], [region]");
  EXPECT_EQ(result.Text(0, "captured_column_list"),
            "[id], [region], [amount], [placed], [note], [raw], [flag], [ratio], [guid]");
  EXPECT_EQ(result.Text(0, "create_date"), "2026-03-01 02:00:00.000");
  EXPECT_EQ(result.Text(0, "object_id"), std::to_string(db_->Instance("dbo_orders").object_id));
  EXPECT_EQ(result.Text(1, "capture_instance"), "sales_items");
  EXPECT_EQ(result.Text(1, "index_column_list"), "[line]");

  const auto& items = Run("EXEC sys.sp_cdc_help_change_data_capture @source_schema = N'SALES', "
                          "@source_name = N'items'").Only();
  ASSERT_EQ(items.rows.size(), 1u);
  EXPECT_EQ(items.Text(0, "capture_instance"), "sales_items");
  EXPECT_TRUE(Run("EXEC sys.sp_cdc_help_change_data_capture 'dbo', 'missing'").Only().rows.empty());

  const auto& reader = Run(std::string(sql::kListCaptureInstances), {}, "reader").Only();
  ASSERT_EQ(reader.rows.size(), 1u);
  EXPECT_EQ(reader.Text(0, "capture_instance"), "dbo_orders");
  EXPECT_TRUE(Run(std::string(sql::kListCaptureInstances), {}, "nobody").Only().rows.empty());
}

TEST_F(CatalogAnswersTest, CapturedColumnsRebuildEachStoredTypeExactly) {
  const RecordingReply reply =
      Run(ToRpcText(sql::kCapturedColumns), {TextParam("@P1", "dbo_orders")}, "nobody");
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(),
            (std::vector<std::string>{"source_schema", "source_table", "capture_instance",
                                      "column_name", "column_id", "column_ordinal", "data_type",
                                      "character_maximum_length", "numeric_precision",
                                      "numeric_precision_radix", "numeric_scale",
                                      "datetime_precision"}));
  EXPECT_EQ(result.ColumnTypes(),
            (std::vector<std::string>{"nvarchar(128)", "nvarchar(128)", "nvarchar(128)",
                                      "nvarchar(128)", "int", "int", "nvarchar(128)", "int",
                                      "tinyint", "smallint", "int", "smallint"}));
  const sim::CaptureInstance instance = db_->Instance("dbo_orders");
  ASSERT_EQ(result.rows.size(), instance.columns.size());
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    SCOPED_TRACE(instance.columns[i].name);
    EXPECT_EQ(result.Text(i, "column_name"), instance.columns[i].name);
    EXPECT_EQ(result.Text(i, "column_ordinal"), std::to_string(i + 1));
    EXPECT_EQ(result.Text(i, "capture_instance"), "dbo_orders");
    const ColumnFacts facts{IntOrNull(result.At(i, "character_maximum_length")),
                            IntOrNull(result.At(i, "numeric_precision")),
                            IntOrNull(result.At(i, "numeric_precision_radix")),
                            IntOrNull(result.At(i, "numeric_scale")),
                            IntOrNull(result.At(i, "datetime_precision"))};
    EXPECT_EQ(Rebuilt(result.Text(i, "data_type"), facts), instance.columns[i].type);
  }
  EXPECT_EQ(result.Text(1, "data_type"), "nvarchar");
  EXPECT_EQ(result.Text(1, "character_maximum_length"), "20");
  EXPECT_EQ(result.Text(4, "character_maximum_length"), "-1");
  EXPECT_EQ(result.Text(2, "numeric_precision"), "18");
  EXPECT_EQ(result.Text(2, "numeric_scale"), "2");
  EXPECT_EQ(result.Text(3, "datetime_precision"), "3");

  const RecordingReply unknown =
      Run(ToRpcText(sql::kCapturedColumns), {TextParam("@P1", "no_such")});
  ASSERT_TRUE(unknown.error);
  EXPECT_EQ(unknown.error->number, 22981);
}

TEST_F(CatalogAnswersTest, EveryTypeTheSimulatorStoresRoundTripsThroughTheFacts) {
  for (const char* declaration :
       {"bit", "tinyint", "smallint", "int", "bigint", "real", "float", "float(10)",
        "float(24)", "float(53)", "decimal(38,10)", "numeric(5,0)", "money", "smallmoney",
        "date", "time(0)", "time(7)", "datetime", "smalldatetime", "datetime2(0)",
        "datetime2(7)", "datetimeoffset(3)", "char(10)", "varchar(8000)", "varchar(max)",
        "nchar(1)", "nvarchar(4000)", "nvarchar(max)", "text", "ntext", "xml", "binary(16)",
        "varbinary(max)", "image", "uniqueidentifier", "rowversion"}) {
    SCOPED_TRACE(declaration);
    const SqlType type = SqlType::Parse(declaration);
    EXPECT_EQ(Rebuilt(type.name, FactsOf(type)), type);
  }
}

TEST_F(CatalogAnswersTest, DdlHistoryListsTheInstancesSchemaChanges) {
  db_->AddColumn(orders_, sim::ParseColumnDeclaration("email nvarchar(200)"));
  const RecordingReply reply =
      Run(ToRpcText(sql::kDdlHistory), {TextParam("@P1", "dbo_orders")}, "reader");
  ASSERT_FALSE(reply.error) << reply.error->message;
  const auto& result = reply.Only();
  EXPECT_EQ(result.ColumnNames(),
            (std::vector<std::string>{"source_schema", "source_table", "capture_instance",
                                      "required_column_update", "ddl_command", "ddl_lsn",
                                      "ddl_time"}));
  EXPECT_EQ(result.ColumnTypes(),
            (std::vector<std::string>{"nvarchar(128)", "nvarchar(128)", "nvarchar(128)", "bit",
                                      "nvarchar(max)", "binary(10)", "datetime"}));
  ASSERT_EQ(result.rows.size(), 1u);
  const auto history = db_->DdlHistory("dbo_orders");
  EXPECT_EQ(result.Text(0, "ddl_command"), history[0].ddl_command);
  EXPECT_EQ(result.Text(0, "ddl_lsn"), history[0].ddl_lsn.ToString());
  EXPECT_EQ(result.Text(0, "ddl_time"), history[0].ddl_time);
  EXPECT_EQ(result.Text(0, "required_column_update"), "0");
  EXPECT_TRUE(Run(ToRpcText(sql::kDdlHistory), {TextParam("@P1", "sales_items")}).Only().rows.empty());
  EXPECT_EQ(Run(ToRpcText(sql::kDdlHistory), {NullParam("@P1", "nvarchar(128)")}).error->number,
            22981);
}

TEST_F(CatalogAnswersTest, SourceColumnsShowsTheColumnsOfReadableTables) {
  db_->DropColumn(orders_, "note");
  auto names = [&](const std::string& object, const std::string& login) {
    std::vector<std::string> out;
    const RecordingReply reply = Run(ToRpcText(sql::kSourceColumns), {TextParam("@P1", object)}, login);
    EXPECT_EQ(reply.Only().ColumnNames(), std::vector<std::string>{"name"});
    for (const auto& row : reply.Only().rows) out.push_back(Render(row.at(0)));
    return out;
  };
  const std::vector<std::string> live = {"id", "region", "amount", "placed", "raw", "flag",
                                         "ratio", "guid"};
  EXPECT_EQ(names("[dbo].[orders]", "owner"), live);
  EXPECT_EQ(names("dbo.ORDERS", "owner"), live);
  EXPECT_EQ(names("orders", "owner"), live);
  EXPECT_TRUE(names("[dbo].[missing]", "owner").empty());
  EXPECT_TRUE(names("not an object name", "owner").empty());
  EXPECT_TRUE(names("[dbo].[orders]", "reader").empty());
  db_->Grant("reader", "dbo.orders");
  EXPECT_EQ(names("[dbo].[orders]", "reader"), live);
}

TEST_F(CatalogAnswersTest, UserNameAndTimeZone) {
  const auto& user = Run(std::string(sql::kUserName), {}, "reader").Only();
  EXPECT_EQ(user.ColumnTypes(), std::vector<std::string>{"nvarchar(128)"});
  EXPECT_EQ(Render(user.rows.at(0).at(0)), "reader");
  const auto& supported = Run(std::string(sql::kHasTimeZoneId)).Only();
  EXPECT_EQ(supported.ColumnTypes(), std::vector<std::string>{"int"});
  EXPECT_EQ(Render(supported.rows.at(0).at(0)), "1");
  const auto& zone = Run(std::string(sql::kTimeZoneId)).Only();
  EXPECT_EQ(zone.ColumnTypes(), std::vector<std::string>{"nvarchar(256)"});
  EXPECT_EQ(Render(zone.rows.at(0).at(0)), "Pacific Standard Time");
}

}  // namespace
}  // namespace mssql_cdc::sim_server
