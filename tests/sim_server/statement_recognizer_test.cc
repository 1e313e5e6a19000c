// Recognition of every statement the odbc backend sends (texts made by the builders of
// source/odbc/statements.h, so the two stay in step), as RPCs with @P<n> markers and as
// batches with `?` or literals, with odd names, other spacing and keyword case; and of what
// drivers send on their own. Statements of no known shape are recognised as unknown.
#include "sim_server/statement_recognizer.h"

#include <gtest/gtest.h>

#include "core/errors.h"

#include <cctype>

#include "params.h"
#include "sim_server/server_errors.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::sim_server {
namespace {

using namespace mssql_cdc::testing;
namespace sql = odbc_sql;

template <typename T>
T Single(const std::vector<RecognizedStatement>& statements) {
  EXPECT_EQ(statements.size(), 1u);
  const T* statement = std::get_if<T>(&statements.at(0));
  if (statement == nullptr) {
    const auto* unknown = std::get_if<UnknownStatement>(&statements.at(0));
    throw std::runtime_error("recognised as statement #" + std::to_string(statements[0].index()) +
                             (unknown ? " (unknown, near '" + unknown->near + "')" : ""));
  }
  return *statement;
}

template <typename T>
T Recognize(std::string_view text, const std::vector<tds::ParamValue>& params = {}) {
  return Single<T>(RecognizeBatch(text, params));
}

// The text with each run of spaces outside quotes and brackets turned into a newline and a
// tab, and letters outside them in `upper` or lower case.
std::string Respaced(std::string_view text, bool upper) {
  std::string out;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      out += c;
      if (c == quote) {
        if (i + 1 < text.size() && text[i + 1] == quote) {
          out += text[++i];
        } else {
          quote = 0;
        }
      }
      continue;
    }
    if (c == '[' || c == '\'') {
      quote = c == '[' ? ']' : '\'';
      out += c;
    } else if (c == ' ') {
      out += "\n\t ";
    } else {
      out += static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                     : std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::string Bytes(const Lsn& lsn) {
  return std::string(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize);
}

const Lsn kFrom = Lsn::FromUint64(0x1234);
const Lsn kTo = Lsn::FromUint64(0xABCDEF);

TEST(StatementRecognizerTest, FixedStatementsWithoutParameters) {
  for (bool upper : {false, true}) {
    SCOPED_TRACE(upper);
    Recognize<TimeZoneSupportQuery>(Respaced(sql::kHasTimeZoneId, upper));
    Recognize<TimeZoneIdQuery>(Respaced(sql::kTimeZoneId, upper));
    Recognize<MaxLsnQuery>(Respaced(sql::kMaxLsn, upper));
    Recognize<ListCaptureInstancesQuery>(Respaced(sql::kListCaptureInstances, upper));
    Recognize<UserNameQuery>(Respaced(sql::kUserName, upper));
    EXPECT_EQ(Recognize<SessionQuery>(Respaced(sql::kSelectOne, upper)).kind,
              SessionQuery::Kind::kSelectOne);
  }
  Recognize<TimeZoneSupportQuery>(sql::kHasTimeZoneId);
  Recognize<MaxLsnQuery>(sql::kMaxLsn);
  Recognize<MaxLsnQuery>("  select SYS.fn_cdc_get_max_lsn ( ) ;  ");
  Recognize<MaxLsnQuery>("SELECT [sys].[fn_cdc_get_max_lsn]() -- the max LSN");
  Recognize<ListCaptureInstancesQuery>("EXECUTE sys.sp_cdc_help_change_data_capture");
  Recognize<ListCaptureInstancesQuery>("sp_cdc_help_change_data_capture");
}

TEST(StatementRecognizerTest, LsnStatementsTakeTheirParametersAsRpcOrBatch) {
  const auto& min = Recognize<MinLsnQuery>(ToRpcText(sql::kMinLsn), {TextParam("@P1", "dbo_orders")});
  EXPECT_EQ(min.capture_instance.kind, SqlValue::Kind::kText);
  EXPECT_EQ(min.capture_instance.bytes, "dbo_orders");
  // `?` markers with positional parameters, and a literal in the parameter's place.
  EXPECT_EQ(Recognize<MinLsnQuery>(sql::kMinLsn, {TextParam("", "x")}).capture_instance.bytes, "x");
  EXPECT_EQ(Recognize<MinLsnQuery>("SELECT sys.fn_cdc_get_min_lsn(N'Ventes été')")
                .capture_instance.bytes,
            "Ventes été");

  const auto& nth = Recognize<NthCommitAfterQuery>(
      ToRpcText(sql::kNthCommitAfter), {IntParam("@P1", 500), LsnParam("@P2", kFrom)});
  EXPECT_EQ(nth.count.int_value, 500);
  EXPECT_EQ(nth.after.bytes, Bytes(kFrom));
  // Parameters matched by name, whatever order they arrive in.
  const auto& swapped = Recognize<NthCommitAfterQuery>(
      ToRpcText(sql::kNthCommitAfter), {LsnParam("@P2", kTo), IntParam("@P1", 7)});
  EXPECT_EQ(swapped.count.int_value, 7);
  EXPECT_EQ(swapped.after.bytes, Bytes(kTo));

  const auto& exact =
      Recognize<CommitTimeQuery>(Respaced(ToRpcText(sql::kCommitTime), true), {LsnParam("@P1", kTo)});
  EXPECT_FALSE(exact.at_or_before);
  EXPECT_EQ(exact.lsn.bytes, Bytes(kTo));
  const auto& before = Recognize<CommitTimeQuery>(
      "SELECT TOP (1) tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn <= "
      "0x00000000000000ABCDEF ORDER BY start_lsn DESC");
  EXPECT_TRUE(before.at_or_before);
  EXPECT_EQ(before.lsn.kind, SqlValue::Kind::kBinary);
  EXPECT_EQ(before.lsn.bytes, Bytes(kTo));
}

TEST(StatementRecognizerTest, CatalogProcedures) {
  const auto& columns = Recognize<CapturedColumnsQuery>(ToRpcText(sql::kCapturedColumns),
                                                        {TextParam("@P1", "dbo_orders")});
  EXPECT_EQ(columns.capture_instance.bytes, "dbo_orders");
  const auto& ddl = Recognize<DdlHistoryQuery>(Respaced(ToRpcText(sql::kDdlHistory), false),
                                               {TextParam("@P1", "sales_items")});
  EXPECT_EQ(ddl.capture_instance.bytes, "sales_items");
  // As a person types them: positional, with a literal.
  EXPECT_EQ(Recognize<CapturedColumnsQuery>("exec sys.sp_cdc_get_captured_columns 'a b'")
                .capture_instance.bytes,
            "a b");
  const auto& source = Recognize<SourceColumnsQuery>(ToRpcText(sql::kSourceColumns),
                                                     {TextParam("@P1", "[dbo].[we]]ird]")});
  EXPECT_EQ(source.object_name.bytes, "[dbo].[we]]ird]");
}

TEST(StatementRecognizerTest, SplitPointsWithOddCaptureInstanceNames) {
  for (const std::string name : {"dbo_orders", "Ventes été 2024", "with space", "x$#@_1"}) {
    SCOPED_TRACE(name);
    const std::string text = sql::SplitPoints(name, 12);
    const auto& rpc = Recognize<SplitPointsQuery>(ToRpcText(text),
                                                  {LsnParam("@P1", kFrom), LsnParam("@P2", kTo)});
    EXPECT_EQ(rpc.change_table, name + "_CT");
    EXPECT_EQ(rpc.tiles, 12);
    EXPECT_EQ(rpc.from.bytes, Bytes(kFrom));
    EXPECT_EQ(rpc.to.bytes, Bytes(kTo));
    const auto& batch = Recognize<SplitPointsQuery>(
        Respaced(text, true), {LsnParam("", kFrom), LsnParam("", kTo)});
    EXPECT_EQ(batch.change_table, name + "_CT");
    EXPECT_EQ(batch.to.bytes, Bytes(kTo));
  }
}

TEST(StatementRecognizerTest, ChangeRowsWithOddColumnNames) {
  const std::vector<std::string> columns = {"id", "a]b", "naïve col", "x]]y", "why?", "[br", "0x1"};
  for (bool command_id : {true, false}) {
    SCOPED_TRACE(command_id);
    const std::string text = sql::ChangeRows("dbo_orders", columns, command_id);
    const auto& query = Recognize<ChangeRowsQuery>(
        ToRpcText(text), {LsnParam("@P1", kFrom), LsnParam("@P2", kTo)});
    EXPECT_EQ(query.change_table, "dbo_orders_CT");
    EXPECT_EQ(query.columns, columns);
    EXPECT_EQ(query.include_command_id, command_id);
    EXPECT_EQ(query.from.bytes, Bytes(kFrom));
    EXPECT_EQ(query.to.bytes, Bytes(kTo));
    EXPECT_EQ(Recognize<ChangeRowsQuery>(Respaced(ToRpcText(text), false),
                                         {LsnParam("@P1", kFrom), LsnParam("@P2", kTo)})
                  .columns,
              columns);
  }
  const auto& none = Recognize<ChangeRowsQuery>(
      ToRpcText(sql::ChangeRows("ünïcode ci", {}, true)), {LsnParam("@P1", kFrom), LsnParam("@P2", kTo)});
  EXPECT_EQ(none.change_table, "ünïcode ci_CT");
  EXPECT_TRUE(none.columns.empty());
}

TEST(StatementRecognizerTest, SnapshotRowsWithPrefixesAndCasts) {
  const std::vector<sql::SnapshotColumn> columns = {
      {"id", SqlType::Parse("int"), true},
      {"gone]col", SqlType::Parse("decimal(18,2)"), false},
      {"note s", SqlType::Parse("nvarchar(max)"), false},
      {"when", SqlType::Parse("datetime2(3)"), false},
      {"prénom", SqlType::Parse("nvarchar(40)"), true},
  };
  const std::string text =
      sql::SnapshotRows("my]schema", "tãble name", columns, {"id", "prénom"}, true, 5000);
  const auto statements = RecognizeBatch(text, {});
  ASSERT_EQ(statements.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<ControlStatements>(statements[0]));
  EXPECT_TRUE(std::holds_alternative<ControlStatements>(statements[1]));
  const auto& query = std::get<SnapshotRowsQuery>(statements[2]);
  EXPECT_EQ(query.schema, "my]schema");
  EXPECT_EQ(query.table, "tãble name");
  ASSERT_EQ(query.columns.size(), columns.size());
  for (std::size_t i = 0; i < columns.size(); ++i) {
    EXPECT_EQ(query.columns[i].name, columns[i].name);
    EXPECT_EQ(query.columns[i].present, columns[i].present);
    if (!columns[i].present) EXPECT_EQ(query.columns[i].cast_type, columns[i].type);
  }
  EXPECT_EQ(query.key_columns, (std::vector<std::string>{"id", "prénom"}));

  const auto plain = RecognizeBatch(
      Respaced(sql::SnapshotRows("dbo", "t", columns, {"id"}, false, -1), true), {});
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(std::get<SnapshotRowsQuery>(plain[0]).table, "t");
  const auto timeout_only = RecognizeBatch(sql::SnapshotRows("dbo", "t", columns, {}, false, 0), {});
  ASSERT_EQ(timeout_only.size(), 2u);
  EXPECT_TRUE(std::get<SnapshotRowsQuery>(timeout_only[1]).key_columns.empty());
}

// `n` text parameters, for statements whose `?` markers take bounds.
std::vector<tds::ParamValue> TextParams(std::size_t n) {
  std::vector<tds::ParamValue> params;
  for (std::size_t i = 0; i < n; ++i) params.push_back(TextParam("", "b" + std::to_string(i)));
  return params;
}

TEST(StatementRecognizerTest, KeyRangesSeeksAndRowCounts) {
  const std::vector<sql::SnapshotColumn> columns = {{"id", SqlType::Parse("int"), true},
                                                    {"v", SqlType::Parse("nvarchar(10)"), true}};
  const std::vector<sql::KeyColumn> key = {{"re]gion", SqlType::Parse("nvarchar(10)")},
                                           {"k", SqlType::Parse("varbinary(8)")}};
  // lo and hi over two columns: 2 x 2 pieces, each an equality prefix and a range.
  const auto ranged = sql::SnapshotRangeRows("dbo", "t", columns, key, true, true, false, -1);
  EXPECT_EQ(ranged.parameters.size(), 12u);
  const auto& rows = Recognize<SnapshotRowsQuery>(Respaced(ranged.sql, true), TextParams(12));
  ASSERT_EQ(rows.pieces.size(), 4u);
  EXPECT_TRUE(rows.key_columns.empty());  // pieces come in no promised order
  EXPECT_EQ(rows.pieces[0][0].column, "re]gion");
  EXPECT_EQ(rows.pieces[0][0].value.bytes, "b0");
  EXPECT_EQ(rows.pieces[0][0].op, "=");
  EXPECT_EQ(rows.pieces[0][1].op, ">=");
  EXPECT_EQ(rows.pieces[0][1].cast_type, SqlType::Parse("varbinary(8)"));
  EXPECT_EQ(rows.pieces[2].size(), 2u);  // region > lo AND region < hi
  const auto one = sql::SnapshotRangeRows("dbo", "t", columns, {key[0]}, false, true, false, -1);
  const auto& single = Recognize<SnapshotRowsQuery>(one.sql, TextParams(1));
  ASSERT_EQ(single.pieces.size(), 1u);
  EXPECT_EQ(single.pieces[0][0].op, "<");
  EXPECT_EQ(single.key_columns, (std::vector<std::string>{"re]gion"}));

  const auto seek = sql::KeyAt("s", "t", key, true, false, -1);
  EXPECT_EQ(seek.parameters.size(), 3u);  // region = lo AND k >= lo, region > lo
  const auto& at = Recognize<KeyAtQuery>(Respaced(seek.sql, false), TextParams(4));
  EXPECT_EQ(at.schema, "s");
  ASSERT_EQ(at.select.size(), 2u);
  EXPECT_EQ(at.select[0].column, "re]gion");
  EXPECT_EQ(at.pieces.size(), 2u);
  EXPECT_EQ(at.key_columns, (std::vector<std::string>{"re]gion", "k"}));
  const auto& first = Recognize<KeyAtQuery>(sql::KeyAt("s", "t", key, false, false, -1).sql,
                                             TextParams(1));
  ASSERT_EQ(first.pieces.size(), 1u);
  EXPECT_TRUE(first.pieces[0].empty());
  const auto& last = Recognize<LastKeyQuery>(sql::LastKey("s", "t", key, false, -1));
  EXPECT_EQ(last.key_columns, (std::vector<std::string>{"re]gion", "k"}));
  const auto& slices = Recognize<KeySlicesQuery>(
      Respaced(sql::KeySlices("s", "t", {"k]ey", SqlType::Parse("int")}, false, -1), true), TextParams(4));
  EXPECT_EQ(slices.column, "k]ey");
  EXPECT_EQ(slices.table, "t");
  EXPECT_EQ(slices.end.bytes, "b3");
  EXPECT_EQ(Recognize<SpaceUsedQuery>(sql::kSpaceUsed, {TextParam("", "[s].[t]")}).object_name.bytes,
            "[s].[t]");
  // A float key cannot bound a range; the statement refuses it.
  EXPECT_THROW(sql::KeyAt("s", "t", {{"f", SqlType::Parse("float")}}, false, false, -1), ConfigError);
}

TEST(StatementRecognizerTest, AllChangesAndLsnArithmetic) {
  const auto& all = Recognize<AllChangesQuery>(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'all update old')",
      {LsnParam("@P1", kFrom), LsnParam("@P2", kTo)});
  EXPECT_EQ(all.capture_instance, "dbo_orders");
  EXPECT_EQ(all.row_filter.bytes, "all update old");
  EXPECT_EQ(Recognize<AllChangesQuery>(
                "select * from cdc.[fn_cdc_get_all_changes_Ventes été](0x01, 0x02, 'all')")
                .capture_instance,
            "Ventes été");
  const auto& step = Recognize<LsnStepQuery>("SELECT sys.fn_cdc_increment_lsn(?)", {LsnParam("", kTo)});
  EXPECT_TRUE(step.increment);
  EXPECT_FALSE(Recognize<LsnStepQuery>("SELECT sys.fn_cdc_decrement_lsn(0x01)").increment);
}

TEST(StatementRecognizerTest, MarkersBindByNameAndUnnamedValuesByPlace) {
  // mssql-jdbc's markers start at @P0; the TDS layer names its values from the declaration.
  const auto& named = Recognize<AllChangesQuery>(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P0, @P1, N'all')",
      {LsnParam("@P0", kFrom), LsnParam("@P1", kTo)});
  EXPECT_EQ(named.from.bytes, LsnParam("", kFrom).text);
  EXPECT_EQ(named.to.bytes, LsnParam("", kTo).text);
  // ODBC's, unnamed with no declaration: @P1 is the first value.
  const auto& unnamed = Recognize<AllChangesQuery>(
      "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@P1, @P2, N'all')",
      {LsnParam("", kFrom), LsnParam("", kTo)});
  EXPECT_EQ(unnamed.to.bytes, LsnParam("", kTo).text);
  try {
    RecognizeBatch("SELECT sys.fn_cdc_increment_lsn(@P0)", {LsnParam("", kFrom)});
    ADD_FAILURE() << "an unnamed value has no place 0";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.error().number, 137);
  }
}

TEST(StatementRecognizerTest, ThreePartNamesOfTheSessionsDatabase) {
  // Debezium names the database in every catalog and CDC statement.
  const auto max = RecognizeBatch("SELECT [sales].sys.fn_cdc_get_max_lsn()", {}, "sales");
  EXPECT_TRUE(std::holds_alternative<MaxLsnQuery>(max.at(0)));
  const auto help = RecognizeBatch("EXEC [SALES].sys.sp_cdc_help_change_data_capture", {}, "sales");
  EXPECT_TRUE(std::holds_alternative<ListCaptureInstancesQuery>(help.at(0)));
  const auto step = RecognizeBatch("SELECT sales.sys.fn_cdc_increment_lsn(@P0)",
                                   {LsnParam("@P0", kFrom)}, "sales");
  EXPECT_EQ(std::get<LsnStepQuery>(step.at(0)).lsn.bytes, LsnParam("", kFrom).text);
  // Another database's name, or a fourth part, is not dropped: no shape takes the statement.
  EXPECT_TRUE(std::holds_alternative<FrontEndQuery>(
      RecognizeBatch("SELECT [other].sys.fn_cdc_get_max_lsn()", {}, "sales").at(0)));
  EXPECT_TRUE(std::holds_alternative<FrontEndQuery>(
      RecognizeBatch("SELECT srv.sales.sys.fn_cdc_get_max_lsn()", {}, "sales").at(0)));
}

TEST(StatementRecognizerTest, WhatDriversSendOnTheirOwn) {
  const auto sets = RecognizeBatch(
      "set textsize 2147483647; SET ANSI_NULLS ON;\nset quoted_identifier on", {});
  ASSERT_EQ(sets.size(), 3u);
  for (const auto& s : sets) EXPECT_TRUE(std::holds_alternative<ControlStatements>(s));
  EXPECT_EQ(Recognize<UseDatabase>("USE [shop]").name, "shop");
  EXPECT_EQ(Recognize<UseDatabase>("use shop;").name, "shop");
  EXPECT_EQ(Recognize<SessionQuery>("SELECT @@spid").kind, SessionQuery::Kind::kSpid);
  EXPECT_EQ(Recognize<SessionQuery>("select 1").kind, SessionQuery::Kind::kSelectOne);
  EXPECT_EQ(Recognize<SessionQuery>("SELECT @@VERSION").kind, SessionQuery::Kind::kVersion);
  EXPECT_EQ(Recognize<SessionQuery>("SELECT DB_NAME()").kind, SessionQuery::Kind::kDatabaseName);
  EXPECT_EQ(Recognize<ServerPropertyQuery>("SELECT SERVERPROPERTY('ProductVersion')").property,
            "ProductVersion");
  Recognize<DatatypeInfoQuery>("exec sp_datatype_info_100 @data_type = 0, @ODBCVer = 3");
  Recognize<DatatypeInfoQuery>("sp_datatype_info 93, @ODBCVer = 2");
  EXPECT_TRUE(RecognizeBatch("  ;; -- nothing\n", {}).empty());
}

TEST(StatementRecognizerTest, UnknownStatementsSayWhereTheyLeftEveryShape) {
  const std::vector<tds::ParamValue> two = {LsnParam("", kFrom), LsnParam("", kTo)};
  auto unknown = [](std::string_view text, const std::vector<tds::ParamValue>& params = {}) {
    return Recognize<UnknownStatement>(text, params);
  };
  EXPECT_EQ(unknown("SELEC 1").near, "SELEC");
  EXPECT_EQ(unknown("DELETE FROM dbo.orders").near, "DELETE");
  EXPECT_EQ(unknown("DELETE FROM dbo.orders").object, "dbo.orders");
  // A query of no shape goes to the T-SQL front end; one piece changed in a client's statement
  // is not taken for that statement.
  auto query = [](std::string_view text, const std::vector<tds::ParamValue>& params = {}) {
    Recognize<FrontEndQuery>(text, params);
  };
  query("SELECT * FROM cdc.dbo_orders_CT");
  query("SELECT sys.fn_cdc_get_max_lsn() + 1");
  EXPECT_EQ(unknown(std::string(sql::kNthCommitAfter) + " DESC", two).near, "DESC");
  query("SELECT MAX(start_lsn) FROM (SELECT TOP (5) start_lsn FROM cdc.lsn_time_mapping "
        "WHERE start_lsn >= 0x01 ORDER BY start_lsn) t");
  std::string no_order = sql::ChangeRows("ci", {"a"}, true);
  no_order = no_order.substr(0, no_order.find(" ORDER BY"));
  query(no_order, two);
  query("SELECT * FROM cdc.fn_cdc_get_net_changes_ci(0x01, 0x02, 'all')");
  // What the front end cannot read either is a statement of no known shape.
  const auto& apply = unknown("SELECT * FROM cdc.change_tables CROSS APPLY cdc.captured_columns");
  EXPECT_EQ(apply.object, "cdc.change_tables");
  unknown("EXEC sys.sp_cdc_get_captured_columns @source = 'x'");
  unknown("EXEC sys.sp_cdc_enable_table @source_schema = 'dbo'");
}

TEST(StatementRecognizerTest, UnreadableTextAndMissingParametersAreSqlServerErrors) {
  auto number = [](std::string_view text, const std::vector<tds::ParamValue>& params = {}) {
    try {
      RecognizeBatch(text, params);
    } catch (const SqlError& e) {
      return e.error().number;
    }
    return 0;
  };
  EXPECT_EQ(number("SELECT 'abc"), 105);
  EXPECT_EQ(number("SELECT [abc"), 105);
  EXPECT_EQ(number(ToRpcText(sql::kMinLsn)), 137);
  EXPECT_EQ(number(sql::kMinLsn), 102);
  EXPECT_EQ(number(ToRpcText(sql::kNthCommitAfter), {IntParam("@P1", 1)}), 137);
  EXPECT_EQ(number(sql::kMaxLsn), 0);
}

// The statements of mssql-cdc-pyspark 0.8.0, as its client sends them (sim serve's log of a run of
// 0.8.0 against it): LSNs as text through CONVERT(binary(10), @P1, 1), answers asked as text.
TEST(StatementRecognizerTest, TheReferenceClientsStatements) {
  const Lsn lsn = Lsn::ParseLenient("0x0000002A000001000007");
  const auto min = Recognize<MinLsnQuery>("SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(@P1), 1)",
                                          {TextParam("@P1", "dbo_orders")});
  EXPECT_TRUE(min.lsn_text);
  const auto step = Recognize<LsnStepQuery>(
      "SELECT CONVERT(varchar(22), sys.fn_cdc_decrement_lsn(CONVERT(binary(10), @P1, 1)), 1)",
      {TextParam("@P1", lsn.ToString())});
  EXPECT_FALSE(step.increment);
  EXPECT_EQ(AsLsn(step.lsn), lsn);  // the text became the 10 bytes it spells
  const auto time = Recognize<CommitTimeQuery>(
      "SELECT TOP (1) CONVERT(varchar(23), CAST(m.tran_end_time AS datetime2(3)), 126) FROM cdc.lsn_time_mapping m "
      "WHERE m.start_lsn <= CONVERT(binary(10), @P1, 1) ORDER BY m.start_lsn DESC",
      {TextParam("@P1", lsn.ToString())});
  EXPECT_TRUE(time.at_or_before && time.iso_text);
  const auto changes = Recognize<ChangeRowsQuery>(
      "SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn, CONVERT(varchar(22), c.[__$seqval], 1) AS "
      "_seqval, c.[__$operation] AS _operation, CAST(m.tran_end_time AS datetime2(3)) AS _commit_ts, c.[id], "
      "c.[name] FROM cdc.[dbo_t_CT] c JOIN cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn] WHERE "
      "c.[__$start_lsn] BETWEEN CONVERT(binary(10), @P1, 1) AND CONVERT(binary(10), @P2, 1) ORDER BY "
      "c.[__$start_lsn], c.[__$seqval], c.[__$operation]",
      {TextParam("@P1", lsn.ToString()), TextParam("@P2", lsn.ToString())});
  EXPECT_TRUE(changes.reference_projection);
  EXPECT_FALSE(changes.include_command_id);
  EXPECT_EQ(changes.columns, (std::vector<std::string>{"id", "name"}));
  const auto tiles = Recognize<KeyTilesQuery>(
      "SELECT [a], [b] FROM (SELECT [a], [b], [__$tile], LAG([__$tile]) OVER (ORDER BY [a], [b]) AS [__$prev] "
      "FROM (SELECT [a], [b], NTILE(4) OVER (ORDER BY [a], [b]) AS [__$tile] FROM [dbo].[t]) a) b "
      "WHERE [__$tile] <> [__$prev] ORDER BY [__$tile]");
  EXPECT_EQ(tiles.key_columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(tiles.tiles, 4);
  const auto buckets = Recognize<KeyBucketsQuery>(
      "SELECT [__$b] AS b, COUNT_BIG(*) AS n, SUM(CAST([__$o] AS decimal(38,0))) AS s FROM (SELECT "
      "CAST(DATEDIFF(day, CAST('19700101' AS date), [d]) AS bigint) AS [__$o], CASE WHEN CAST(DATEDIFF(day, "
      "CAST('19700101' AS date), [d]) AS bigint) >= 0 THEN CAST(DATEDIFF(day, CAST('19700101' AS date), [d]) AS "
      "bigint) / CAST(7 AS bigint) ELSE (CAST(DATEDIFF(day, CAST('19700101' AS date), [d]) AS bigint) + 1) / "
      "CAST(7 AS bigint) - 1 END AS [__$b] FROM [dbo].[t] WHERE [d] IS NOT NULL) x GROUP BY [__$b]");
  EXPECT_TRUE(buckets.day_number);
  EXPECT_EQ(buckets.width, 7);
  // The first slices of a plan have an upper bound only.
  const auto below = Recognize<KeyBucketsQuery>(
      "SELECT [__$b] AS b, COUNT_BIG(*) AS n, SUM(CAST([__$o] AS decimal(38,0))) AS s FROM (SELECT CAST([k] AS "
      "bigint) AS [__$o], CASE WHEN CAST([k] AS bigint) >= 0 THEN CAST([k] AS bigint) / CAST(1 AS bigint) ELSE "
      "(CAST([k] AS bigint) + 1) / CAST(1 AS bigint) - 1 END AS [__$b] FROM [dbo].[t] WHERE [k] IS NOT NULL AND "
      "[k] < 25) x GROUP BY [__$b]");
  EXPECT_FALSE(below.lo.has_value());
  ASSERT_TRUE(below.hi.has_value());
  // 0.8.0's integer chunk bounds are literals, compared in the column's own type.
  const auto literal = Recognize<SnapshotRowsQuery>(
      "SELECT [a], [b] FROM [dbo].[t] WHERE [a] >= 12 AND ([a] < 24 OR [a] IS NULL)");
  ASSERT_EQ(literal.pieces.size(), 1u);
  ASSERT_EQ(literal.pieces[0].size(), 3u);
  EXPECT_TRUE(literal.pieces[0][0].literal);
  EXPECT_EQ(literal.pieces[0][1].op, "<");
  // A key range with its NULL-safe upper bound: OR, IS NULL and parentheses.
  const auto rows = Recognize<SnapshotRowsQuery>(
      "SELECT [a], [b] FROM [dbo].[t] WHERE [a] = CAST(@P1 AS bigint) AND [b] >= CAST(@P2 AS int) AND (([a] < "
      "CAST(@P3 AS bigint) OR [a] IS NULL) OR ([a] = CAST(@P4 AS bigint) AND ([b] < CAST(@P5 AS int) OR [b] IS "
      "NULL)))",
      {IntParam("@P1", 1), IntParam("@P2", 2), IntParam("@P3", 3), IntParam("@P4", 4), IntParam("@P5", 5)});
  ASSERT_EQ(rows.pieces.size(), 1u);
  const KeyPiece& piece = rows.pieces[0];
  ASSERT_EQ(piece.size(), 7u);
  EXPECT_EQ(piece[2].opens, 2);
  EXPECT_TRUE(piece[3].or_before);
  EXPECT_EQ(piece[3].op, "IS NULL");
  EXPECT_EQ(piece[3].closes, 1);
  EXPECT_EQ(piece[6].closes, 3);
  // Parentheses that do not balance are not a piece.
  EXPECT_TRUE(std::holds_alternative<UnknownStatement>(
      RecognizeBatch("SELECT [a] FROM [dbo].[t] WHERE ([a] = CAST(@P1 AS int)", {IntParam("@P1", 1)}).at(0)));
}

// The same client on a server on another zone than UTC: AT TIME ZONE conversions naming the zone.
std::string Zoned(std::string text, const std::string& zone) {
  for (auto at = text.find("{Z}"); at != std::string::npos; at = text.find("{Z}", at + zone.size())) {
    text.replace(at, 3, zone);
  }
  return text;
}

TEST(StatementRecognizerTest, TheReferenceClientsStatementsOnAnotherZone) {
  const std::string lsn = "0x0000002A000001000007";
  const std::string commit_time =
      "SELECT TOP (1) CONVERT(varchar(23), CASE WHEN EXISTS (SELECT 1 FROM (SELECT d.start_lsn, d.t FROM "
      "(SELECT CASE WHEN (DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE N'{Z}') < "
      "DATEPART(TZOFFSET, m.tran_end_time AT TIME ZONE N'{Z}') AND DATEPART(TZOFFSET, DATEADD(minute, "
      "DATEPART(TZOFFSET, m.tran_end_time AT TIME ZONE N'{Z}') - DATEPART(TZOFFSET, DATEADD(hour, 3, "
      "m.tran_end_time) AT TIME ZONE N'{Z}'), m.tran_end_time) AT TIME ZONE N'{Z}') = DATEPART(TZOFFSET, "
      "DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE N'{Z}')) THEN COALESCE((SELECT TOP (1) start_lsn FROM "
      "cdc.lsn_time_mapping WHERE tran_end_time <= DATEADD(hour, -3, m.tran_end_time) ORDER BY "
      "tran_end_time DESC), 0x00000000000000000000) ELSE m.start_lsn END AS lo) b CROSS APPLY (SELECT "
      "start_lsn, tran_end_time AS t, LAG(tran_end_time) OVER (ORDER BY start_lsn) AS prev FROM "
      "cdc.lsn_time_mapping WHERE start_lsn > b.lo AND start_lsn <= m.start_lsn) d WHERE d.t < "
      "DATEADD(minute, -1, d.prev) AND (DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT TIME ZONE N'{Z}') < "
      "DATEPART(TZOFFSET, d.t AT TIME ZONE N'{Z}') AND DATEPART(TZOFFSET, DATEADD(minute, "
      "DATEPART(TZOFFSET, d.t AT TIME ZONE N'{Z}') - DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT TIME ZONE "
      "N'{Z}'), d.t) AT TIME ZONE N'{Z}') = DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT TIME ZONE N'{Z}'))) "
      "x WHERE x.start_lsn <= m.start_lsn AND x.t > DATEADD(hour, -3, m.tran_end_time)) THEN "
      "CAST(DATEADD(minute, -DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE N'{Z}'), "
      "m.tran_end_time) AS datetime2(3)) ELSE CAST((m.tran_end_time AT TIME ZONE N'{Z}') AT TIME ZONE 'UTC' "
      "AS datetime2(3)) END, 126) FROM cdc.lsn_time_mapping m WHERE m.start_lsn = CONVERT(binary(10), @P1, "
      "1) ORDER BY m.start_lsn DESC";
  const auto time = Recognize<CommitTimeQuery>(Zoned(commit_time, "Pacific Standard Time"), {TextParam("@P1", lsn)});
  ASSERT_TRUE(time.zone.has_value());
  EXPECT_EQ(AsText(*time.zone), "Pacific Standard Time");
  EXPECT_FALSE(time.at_or_before);
  // One expression naming two zones is no shape 0.8.0 sends.
  std::string mixed = Zoned(commit_time, "Pacific Standard Time");
  mixed.replace(mixed.rfind("Pacific"), 7, "Central");
  EXPECT_TRUE(std::holds_alternative<UnknownStatement>(RecognizeBatch(mixed, {TextParam("@P1", lsn)}).at(0)));

  const auto probe = Recognize<RangeOffsetQuery>(
      "SELECT CASE WHEN DATEDIFF(day, MIN(tran_end_time), MAX(tran_end_time)) < 7 AND DATEPART(TZOFFSET, "
      "DATEADD(hour, -3, MIN(tran_end_time)) AT TIME ZONE N'Pacific Standard Time') = DATEPART(TZOFFSET, "
      "DATEADD(hour, 3, MAX(tran_end_time)) AT TIME ZONE N'Pacific Standard Time') THEN DATEPART(TZOFFSET, "
      "DATEADD(hour, 3, MAX(tran_end_time)) AT TIME ZONE N'Pacific Standard Time') END FROM cdc.lsn_time_mapping "
      "WHERE start_lsn BETWEEN CONVERT(binary(10), @P1, 1) AND CONVERT(binary(10), @P2, 1)",
      {TextParam("@P1", lsn), TextParam("@P2", lsn)});
  EXPECT_EQ(AsText(probe.zone), "Pacific Standard Time");
  EXPECT_EQ(AsLsn(probe.to), Lsn::ParseLenient(lsn));

  for (const auto& [minutes, written] : {std::pair{480, "480"}, std::pair{-330, "-330"}}) {
    const auto changes = Recognize<ChangeRowsQuery>(
        std::string("SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn, CONVERT(varchar(22), "
                    "c.[__$seqval], 1) AS _seqval, c.[__$operation] AS _operation, CAST(DATEADD(minute, ") +
            written + ", m.tran_end_time) AS datetime2(3)) AS _commit_ts, c.[id] FROM cdc.[dbo_t_CT] c JOIN "
            "cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn] WHERE c.[__$start_lsn] BETWEEN "
            "CONVERT(binary(10), @P1, 1) AND CONVERT(binary(10), @P2, 1) ORDER BY c.[__$start_lsn], c.[__$seqval], "
            "c.[__$operation]",
        {TextParam("@P1", lsn), TextParam("@P2", lsn)});
    EXPECT_EQ(changes.commit_minutes_added, minutes);
  }

  // A range whose offset changes: per row, with the commits where the local time went back.
  const auto per_row = Recognize<ChangeRowsQuery>(
      "SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn, CONVERT(varchar(22), c.[__$seqval], 1) AS "
      "_seqval, c.[__$operation] AS _operation, CASE WHEN EXISTS (SELECT 1 FROM (SELECT * FROM (VALUES "
      "(CONVERT(binary(10), @P1, 1), CONVERT(datetime, @P2, 126)), (CONVERT(binary(10), @P3, 1), CONVERT(datetime, "
      "@P4, 126))) v(start_lsn, t)) x WHERE x.start_lsn <= m.start_lsn AND x.t > DATEADD(hour, -3, m.tran_end_time)) "
      "THEN CAST(DATEADD(minute, -DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE N'Pacific "
      "Standard Time'), m.tran_end_time) AS datetime2(3)) ELSE CAST((m.tran_end_time AT TIME ZONE N'Pacific Standard "
      "Time') AT TIME ZONE 'UTC' AS datetime2(3)) END AS _commit_ts, c.[id] FROM cdc.[dbo_t_CT] c JOIN "
      "cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn] WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), "
      "@P5, 1) AND CONVERT(binary(10), @P6, 1) ORDER BY c.[__$start_lsn], c.[__$seqval], c.[__$operation]",
      {TextParam("@P1", lsn), TextParam("@P2", "2026-11-01T01:00:00"), TextParam("@P3", lsn),
       TextParam("@P4", "2026-11-01T01:00:50"), TextParam("@P5", lsn), TextParam("@P6", lsn)});
  ASSERT_TRUE(per_row.zoned.has_value());
  EXPECT_EQ(per_row.zoned->drops.size(), 2u);
  EXPECT_EQ(AsLsn(per_row.zoned->drops[0].first), Lsn::ParseLenient(lsn));
  EXPECT_EQ(AsText(per_row.zoned->zone), "Pacific Standard Time");

  const auto seek = Recognize<TimeToLsnQuery>(
      "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn(N'largest less than or equal', (SELECT MIN(v) FROM "
      "(VALUES (CONVERT(datetime2(0), (CONVERT(datetime2(0), @P1, 126) AT TIME ZONE 'UTC') AT TIME ZONE N'Pacific "
      "Standard Time')), (DATEADD(hour, -1, CONVERT(datetime2(0), (DATEADD(hour, 1, CONVERT(datetime2(0), @P2, 126)) "
      "AT TIME ZONE 'UTC') AT TIME ZONE N'Pacific Standard Time')))) x(v))), 1)",
      {TextParam("@P1", "2026-11-01T08:30:00"), TextParam("@P2", "2026-11-01T08:30:00")});
  ASSERT_TRUE(seek.zone.has_value());
  EXPECT_EQ(AsText(seek.time2), "2026-11-01T08:30:00");
}

}  // namespace
}  // namespace mssql_cdc::sim_server
