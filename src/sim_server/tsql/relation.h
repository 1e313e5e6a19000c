// What a name in a FROM clause stands for once the front end has found it: the SQLite table
// expression to read it from, and its columns with their SQL Server types.
#pragma once

#include <string>
#include <vector>

#include "core/sql_type.h"

namespace mssql_cdc::sim_server::tsql {

struct RelationColumn {
  std::string name;  // as SQL Server names it
  SqlType type;
  bool nullable = true;
  std::string sql;   // the SQLite column of `from_sql` that holds it, quoted
};

struct Relation {
  std::string from_sql;  // a quoted SQLite table or a parenthesised SELECT, without alias
  std::vector<RelationColumn> columns;
};

}  // namespace mssql_cdc::sim_server::tsql
