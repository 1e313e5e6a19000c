// Translates a parsed T-SQL query (ast.h) into one SQLite query over the simulated database's
// file, binding every name against the simulated server as SQL Server resolves it: common
// table expressions, then the catalog views (catalog_views.h), then change tables
// (cdc.<instance>_CT) and the CDC query functions (cdc.fn_cdc_get_all_changes_<instance>),
// then source tables; one-part names in dbo. Every expression gets the SQL Server type SQL
// Server would give it, which is the type the result column is sent with.
//
// Where SQLite and T-SQL differ, the translation makes SQLite answer as SQL Server would:
// strings compare ignoring case and trailing spaces (the tsql collation, functions.h); `+` of
// strings concatenates; binary values compare as if the shorter were padded with zeros.
#pragma once

#include <string>
#include <vector>

#include "sim_server/session.h"
#include "sim_server/sql_value.h"
#include "sim_server/tsql/ast.h"
#include "tds/query_handler.h"

struct sqlite3_stmt;

namespace mssql_cdc::sim_server::tsql {

struct Translation {
  std::string sql;                          // SQLite, parameters as ?1, ?2, ...
  std::vector<SqlValue> parameters;         // in order
  std::vector<tds::ResultColumn> columns;   // the result's names and SQL Server types
};

// Throws SqlError with SQL Server's error for what does not resolve: 208 (object), 207
// (column), 209 (ambiguous column), 195 (function), 229 (no SELECT permission), 102.
Translation Translate(Session& session, const Query& query);

// Binds a translation's parameters to its prepared statement.
void BindParameters(sqlite3_stmt* statement, const std::vector<SqlValue>& params);

}  // namespace mssql_cdc::sim_server::tsql
