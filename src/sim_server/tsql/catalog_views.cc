#include "sim_server/tsql/catalog_views.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/ascii.h"
#include "sim_server/result_types.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/tsql/sqlite_text.h"

namespace mssql_cdc::sim_server::tsql {
namespace {

struct ViewColumn {
  const char* name;
  const char* type;
  std::string sql;  // over the view's source
  bool nullable = true;
};

Relation Make(std::string source, std::initializer_list<ViewColumn> columns) {
  Relation view;
  std::string select;
  for (const ViewColumn& column : columns) {
    if (!select.empty()) select += ", ";
    select += column.sql + " AS " + SqlName(column.name);
    // sysname is nvarchar(128), as the TDS writer sends it.
    const SqlType type = std::string_view(column.type) == "sysname" ? types::Sysname() : SqlType::Parse(column.type);
    view.columns.push_back({column.name, type, column.nullable, SqlName(column.name)});
  }
  view.from_sql = "(SELECT " + select + " FROM " + source + ")";
  return view;
}

// The base type name of a stored declaration: "nvarchar" of "nvarchar(40)".
constexpr const char* kBaseTypeSql =
    "CASE WHEN instr(column_type, '(') > 0 THEN substr(column_type, 1, instr(column_type, '(') - 1) "
    "ELSE column_type END";

std::vector<std::string> Schemas(Session& session) {
  std::vector<std::string> names = {"dbo", "guest", "INFORMATION_SCHEMA", "sys", "cdc"};
  std::set<std::string> others;
  for (const auto& table : session.catalog().ListTables()) {
    const bool known = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return EqualsIgnoringCase(n, table.schema);
    });
    if (!known) others.insert(table.schema);
  }
  names.insert(names.end(), others.begin(), others.end());
  return names;
}

}  // namespace

std::string SchemaIdSql(Session& session, std::string_view name_sql) {
  const auto names = Schemas(session);
  std::string sql = "CASE lower(" + std::string(name_sql) + ")";
  for (std::size_t i = 0; i < names.size(); ++i) {
    sql += " WHEN " + SqlString(AsciiLower(names[i])) + " THEN " + std::to_string(i + 1);
  }
  return sql + " END";
}

std::optional<Relation> CatalogView(Session& session, std::string_view schema, std::string_view name) {
  auto is = [&](std::string_view s, std::string_view n) {
    return EqualsIgnoringCase(schema, s) && EqualsIgnoringCase(name, n);
  };
  if (is("sys", "databases")) {
    std::string rows;
    const std::pair<int, std::string> databases[] = {
        {1, "master"}, {2, "tempdb"}, {3, "model"}, {4, "msdb"}, {kDatabaseId, session.database_name()}};
    for (const auto& [id, db] : databases) {
      if (!rows.empty()) rows += " UNION ALL ";
      rows += "SELECT " + std::to_string(id) + " AS id, " + SqlString(db) + " AS name";
    }
    return Make("(" + rows + ")",
                {{"name", "sysname", "name", false},
                 {"database_id", "int", "id", false},
                 {"is_cdc_enabled", "bit", "id = " + std::to_string(kDatabaseId), false},
                 {"state", "tinyint", "0"},
                 {"state_desc", "nvarchar(60)", "'ONLINE'"},
                 {"is_read_only", "bit", "0", false},
                 {"collation_name", "sysname", "'SQL_Latin1_General_CP1_CI_AS'"},
                 {"compatibility_level", "tinyint", "160", false}});
  }
  if (is("sys", "schemas")) {
    const auto names = Schemas(session);
    std::string rows;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!rows.empty()) rows += " UNION ALL ";
      rows += "SELECT " + SqlString(names[i]) + " AS name, " + std::to_string(i + 1) + " AS id";
    }
    return Make("(" + rows + ")", {{"name", "sysname", "name", false},
                                   {"schema_id", "int", "id", false},
                                   {"principal_id", "int", "1"}});
  }
  if (is("sys", "tables")) {
    return Make("sim_tables", {{"name", "sysname", "table_name", false},
                                   {"object_id", "int", "object_id", false},
                                   {"schema_id", "int", SchemaIdSql(session, "schema_name"), false},
                                   {"type", "char(2)", "'U '"},
                                   {"type_desc", "nvarchar(60)", "'USER_TABLE'"},
                                   {"create_date", "datetime", "create_date", false},
                                   {"is_ms_shipped", "bit", "0", false},
                                   {"is_tracked_by_cdc", "bit",
                                    "EXISTS (SELECT 1 FROM cdc_change_tables c WHERE c.source_object_id = "
                                    "sim_tables.object_id)",
                                    false}});
  }
  if (is("cdc", "change_tables")) {
    return Make("cdc_change_tables",
                {{"object_id", "int", "object_id", false},
                 {"version", "int", "0"},
                 {"source_object_id", "int", "source_object_id"},
                 {"capture_instance", "sysname", "capture_instance", false},
                 {"start_lsn", "binary(10)", "start_lsn"},
                 {"end_lsn", "binary(10)", "end_lsn"},
                 {"supports_net_changes", "bit", "supports_net_changes"},
                 {"has_drop_pending", "bit", "has_drop_pending"},
                 {"role_name", "sysname", "role_name"},
                 {"index_name", "sysname", "index_name"},
                 {"filegroup_name", "sysname", "filegroup_name"},
                 {"create_date", "datetime", "create_date"},
                 {"partition_switch", "bit", "partition_switch", false}});
  }
  if (is("cdc", "captured_columns")) {
    return Make("cdc_captured_columns",
                {{"object_id", "int", "object_id", false},
                 {"column_name", "sysname", "column_name", false},
                 {"column_id", "int", "column_id"},
                 {"column_type", "sysname", kBaseTypeSql, false},
                 {"column_ordinal", "int", "column_ordinal", false},
                 {"is_computed", "bit", "is_computed"}});
  }
  if (is("cdc", "index_columns")) {
    return Make("cdc_index_columns", {{"object_id", "int", "object_id", false},
                                      {"column_name", "sysname", "column_name", false},
                                      {"index_ordinal", "tinyint", "index_ordinal", false},
                                      {"column_id", "int", "column_id", false}});
  }
  if (is("cdc", "lsn_time_mapping")) {
    return Make("cdc_lsn_time_mapping", {{"start_lsn", "binary(10)", "start_lsn", false},
                                         {"tran_begin_time", "datetime", "tran_begin_time"},
                                         {"tran_end_time", "datetime", "tran_end_time"},
                                         {"tran_id", "varbinary(10)", "tran_id"}});
  }
  if (is("cdc", "ddl_history")) {
    return Make("cdc_ddl_history", {{"source_object_id", "int", "source_object_id"},
                                    {"object_id", "int", "object_id", false},
                                    {"required_column_update", "bit", "required_column_update"},
                                    {"ddl_command", "nvarchar(max)", "ddl_command"},
                                    {"ddl_lsn", "binary(10)", "ddl_lsn", false},
                                    {"ddl_time", "datetime", "ddl_time"}});
  }
  return std::nullopt;
}

}  // namespace mssql_cdc::sim_server::tsql
