// The built-in functions of T-SQL the front end answers, each translated into SQLite: the CDC
// functions (sys.fn_cdc_get_max_lsn, ...), metadata functions (OBJECT_ID, OBJECT_NAME,
// OBJECT_SCHEMA_NAME, DB_ID, DB_NAME, SCHEMA_ID, SCHEMA_NAME), aggregates, ROW_NUMBER and
// the string and null functions clients use. The SQLite functions and the `tsql` collation
// they rely on are registered once on each session's connection (RegisterQueryFunctions).
#pragma once

#include <functional>
#include <string>

#include "sim_server/session.h"
#include "sim_server/tsql/ast.h"
#include "sim_server/tsql/typed.h"

namespace mssql_cdc::sim_server::tsql {

// What a function's translation needs of the translator.
struct FunctionContext {
  Session& session;
  std::function<Typed(const Expr&)> translate;      // an argument, in the caller's scope
  std::function<std::string(SqlValue)> parameter;  // a value bound as a parameter: "?n"
};

// The call `call` (an Expr of kind kFunction). Throws SqlError 195 for a function the
// simulator does not know, 174 for a wrong number of arguments.
Typed TranslateFunction(FunctionContext& context, const Expr& call);

// Registers the SQLite functions and the collation of the translations on the session's
// connection, once per session.
void RegisterQueryFunctions(Session& session);

// The collation the translations compare strings with: ASCII case ignored, trailing spaces
// ignored, as SQL_Latin1_General_CP1_CI_AS compares (for ASCII).
inline constexpr const char* kCollation = "tsql";

}  // namespace mssql_cdc::sim_server::tsql
