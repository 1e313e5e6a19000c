#include "source/odbc/catalog_queries.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "core/errors.h"
#include "source/odbc/catalog_rows.h"
#include "source/odbc/catalog_values.h"
#include "source/odbc/lsn_slots.h"
#include "source/odbc/statement.h"
#include "source/odbc/statements.h"

namespace mssql_cdc::odbc {
namespace {

// The one LSN an executed statement returns; nullopt for NULL or no row.
std::optional<Lsn> SingleLsn(OdbcStatement& statement, std::string_view sql, const std::string& what) {
  if (!statement.Execute(sql) || !statement.Fetch()) return std::nullopt;
  return LsnFromBytes(statement.GetBytes(1), what);
}

}  // namespace

namespace {

std::vector<CaptureInstanceInfo> CaptureInstanceRows(OdbcStatement& statement);

}  // namespace

std::vector<CaptureInstanceInfo> QueryCaptureInstances(OdbcConnection& connection) {
  OdbcStatement statement(connection);
  if (!statement.Execute(odbc_sql::kListCaptureInstances)) return {};
  return CaptureInstanceRows(statement);
}

std::vector<CaptureInstanceInfo> QueryTableInstances(OdbcConnection& connection,
                                                     const std::string& source_schema,
                                                     const std::string& source_table) {
  OdbcStatement statement(connection);
  statement.BindText(1, source_schema);
  statement.BindText(2, source_table);
  if (!statement.Execute(odbc_sql::kListTableInstances)) return {};
  return CaptureInstanceRows(statement);
}

namespace {

std::vector<CaptureInstanceInfo> CaptureInstanceRows(OdbcStatement& statement) {
  std::vector<CaptureInstanceInfo> out;
  enum { kSchema, kTable, kName, kStartLsn, kCreateDate, kIndexColumns };
  CatalogRows rows(statement,
                   {{"source_schema", CellKind::kText},
                    {"source_table", CellKind::kText},
                    {"capture_instance", CellKind::kText},
                    {"start_lsn", CellKind::kBytes},
                    {"create_date", CellKind::kTime},
                    {"index_column_list", CellKind::kText}},
                   "sys.sp_cdc_help_change_data_capture");
  while (rows.Next()) {
    CaptureInstanceInfo info;
    info.source_schema = rows.RequiredText(kSchema);
    info.source_table = rows.RequiredText(kTable);
    info.name = rows.RequiredText(kName);
    info.start_lsn =
        LsnFromBytes(rows.Bytes(kStartLsn), "start_lsn of capture instance '" + info.name + "'")
            .value_or(Lsn());
    info.create_date = rows.Time(kCreateDate).value_or(LocalMicros{});
    info.index_columns = ParseIndexColumnList(rows.Text(kIndexColumns).value_or(""));
    out.push_back(std::move(info));
  }
  std::stable_sort(out.begin(), out.end(), [](const CaptureInstanceInfo& a, const CaptureInstanceInfo& b) {
    return std::tie(a.source_schema, a.source_table, a.create_date.value, a.start_lsn, a.name) <
           std::tie(b.source_schema, b.source_table, b.create_date.value, b.start_lsn, b.name);
  });
  return out;
}

}  // namespace

std::vector<CapturedColumn> QueryCapturedColumns(OdbcConnection& connection,
                                                 const std::string& capture_instance) {
  OdbcStatement statement(connection);
  statement.BindText(1, capture_instance);
  std::vector<CapturedColumn> out;
  if (!statement.Execute(odbc_sql::kCapturedColumns)) return out;
  enum { kName, kId, kOrdinal, kType, kLength, kPrecision, kScale, kDatetimePrecision };
  CatalogRows rows(statement,
                   {{"column_name", CellKind::kText},
                    {"column_id", CellKind::kInt},
                    {"column_ordinal", CellKind::kInt},
                    {"data_type", CellKind::kText},
                    {"character_maximum_length", CellKind::kInt},
                    {"numeric_precision", CellKind::kInt},
                    {"numeric_scale", CellKind::kInt},
                    {"datetime_precision", CellKind::kInt}},
                   "sys.sp_cdc_get_captured_columns");
  while (rows.Next()) {
    CapturedColumn column;
    column.name = rows.RequiredText(kName);
    column.column_id = static_cast<int>(rows.Int(kId).value_or(0));
    column.column_ordinal = static_cast<int>(rows.Int(kOrdinal).value_or(0));
    column.type = SqlTypeFromCatalog(CatalogType{rows.RequiredText(kType), rows.Int(kLength),
                                                 rows.Int(kPrecision), rows.Int(kScale),
                                                 rows.Int(kDatetimePrecision)},
                                     column.name);
    out.push_back(std::move(column));
  }
  std::stable_sort(out.begin(), out.end(), [](const CapturedColumn& a, const CapturedColumn& b) {
    return a.column_ordinal < b.column_ordinal;
  });
  return out;
}

std::vector<DdlEvent> QueryDdlHistory(OdbcConnection& connection,
                                      const std::string& capture_instance) {
  OdbcStatement statement(connection);
  statement.BindText(1, capture_instance);
  std::vector<DdlEvent> out;
  if (!statement.Execute(odbc_sql::kDdlHistory)) return out;
  enum { kLsn, kCommand, kTime };
  CatalogRows rows(statement,
                   {{"ddl_lsn", CellKind::kBytes},
                    {"ddl_command", CellKind::kText},
                    {"ddl_time", CellKind::kTime}},
                   "sys.sp_cdc_get_ddl_history");
  while (rows.Next()) {
    DdlEvent event;
    event.ddl_lsn = LsnFromBytes(rows.Bytes(kLsn), "ddl_lsn").value_or(Lsn());
    event.ddl_command = rows.Text(kCommand).value_or("");
    event.ddl_time = rows.Time(kTime).value_or(LocalMicros{});
    out.push_back(std::move(event));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const DdlEvent& a, const DdlEvent& b) { return a.ddl_lsn < b.ddl_lsn; });
  return out;
}

std::vector<std::string> QueryTableColumns(OdbcConnection& connection, const std::string& object) {
  OdbcStatement statement(connection);
  statement.BindText(1, object);
  std::vector<std::string> out;
  if (!statement.Execute(odbc_sql::kSourceColumns)) return out;
  CatalogRows rows(statement, {{"name", CellKind::kText}}, "sys.columns");
  while (rows.Next()) out.push_back(rows.RequiredText(0));
  return out;
}

std::optional<std::string> QueryTimeZone(OdbcConnection& connection) {
  {
    OdbcStatement statement(connection);
    const bool has_zone = statement.Execute(odbc_sql::kHasTimeZoneId) && statement.Fetch() &&
                          statement.GetInt(1).value_or(0) == 1;
    if (!has_zone) return std::nullopt;
  }
  OdbcStatement statement(connection);
  if (!statement.Execute(odbc_sql::kTimeZoneId) || !statement.Fetch()) {
    throw SourceError("the server answered CURRENT_TIMEZONE_ID() with no row");
  }
  return statement.GetText(1);
}

double TimeRoundTrip(OdbcConnection& connection) {
  const auto started = std::chrono::steady_clock::now();
  OdbcStatement statement(connection);
  if (statement.Execute(odbc_sql::kSelectOne)) {
    while (statement.Fetch()) {
    }
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
      .count();
}

std::optional<std::string> QueryUserName(OdbcConnection& connection) {
  OdbcStatement statement(connection);
  if (!statement.Execute(odbc_sql::kUserName) || !statement.Fetch()) return std::nullopt;
  return statement.GetText(1);
}

Lsn QueryMinLsn(OdbcConnection& connection, const std::string& capture_instance) {
  OdbcStatement statement(connection);
  statement.BindText(1, capture_instance);
  return SingleLsn(statement, odbc_sql::kMinLsn, "sys.fn_cdc_get_min_lsn").value_or(Lsn());
}

std::optional<Lsn> QueryTimeToLsn(OdbcConnection& connection, LocalMicros time) {
  OdbcStatement statement(connection);
  statement.BindText(1, FormatIsoMillis(time.value));
  return SingleLsn(statement, odbc_sql::kTimeToLsn, "sys.fn_cdc_map_time_to_lsn");
}

std::optional<Lsn> QueryMaxLsn(OdbcConnection& connection) {
  OdbcStatement statement(connection);
  return SingleLsn(statement, odbc_sql::kMaxLsn, "sys.fn_cdc_get_max_lsn");
}

std::optional<Lsn> QueryNthCommitAfter(OdbcConnection& connection, const Lsn& after, std::int64_t n) {
  OdbcStatement statement(connection);
  statement.BindInt64(1, n);
  statement.BindLsn(2, after);
  return SingleLsn(statement, odbc_sql::kNthCommitAfter, "cdc.lsn_time_mapping");
}

std::optional<LocalMicros> QueryCommitTime(OdbcConnection& connection, std::string_view sql,
                                           const Lsn& lsn) {
  OdbcStatement statement(connection);
  statement.BindLsn(1, lsn);
  if (!statement.Execute(sql) || !statement.Fetch()) return std::nullopt;
  const auto time = statement.GetTimestamp(1);
  if (!time) return std::nullopt;
  return LocalMicros{TimestampMicros(*time)};
}

std::vector<SplitPoint> QuerySplitPoints(OdbcConnection& connection,
                                         const std::string& capture_instance, const Lsn& from,
                                         const Lsn& to, int tiles) {
  const std::string sql = odbc_sql::SplitPoints(capture_instance, tiles);
  OdbcStatement statement(connection);
  statement.BindLsn(1, from);
  statement.BindLsn(2, to);
  std::vector<SplitPoint> out;
  if (!statement.Execute(sql)) return out;
  enum { kBound, kNext, kRows };
  CatalogRows rows(statement, {{"b", CellKind::kBytes}, {"n", CellKind::kBytes}, {"r", CellKind::kInt}},
                   "the split points query");
  while (rows.Next()) {
    const auto bound = LsnFromBytes(rows.Bytes(kBound), "a split point");
    if (!bound) continue;  // an aggregate over no rows
    SplitPoint point;
    point.bound = *bound;
    point.next = LsnFromBytes(rows.Bytes(kNext), "a split point").value_or(bound->Increment());
    point.rows = rows.Int(kRows).value_or(0);
    out.push_back(point);
  }
  return out;
}

}  // namespace mssql_cdc::odbc
