// Reads a T-SQL query into the tree of ast.h: the grammar of SELECT that clients send to read a
// catalog and change rows, recursive descent with SQL Server's operator precedence. What it
// cannot read fails as SQL Server's parser does, with error 102 near the token it stopped at.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sim_server/sql_tokens.h"
#include "sim_server/tsql/ast.h"

namespace mssql_cdc::sim_server::tsql {

// The query in tokens[begin, end); `values[i]` is the bound value of tokens[i] when that token
// is a parameter marker. Throws SqlError (102) when the tokens are not one query.
Query ParseQuery(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end,
                 const std::vector<SqlValue>& values);

// DECLARE @name TABLE(column type [NULL | NOT NULL], ...), as Microsoft's JDBC driver declares
// the table its getColumns fills. Throws SqlError (102) when the tokens are not one.
struct TableDeclaration {
  std::string name;
  std::vector<std::pair<std::string, SqlType>> columns;
};
TableDeclaration ParseTableDeclaration(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end);

// Whether the tokens begin like a query the parser reads (SELECT or WITH): the front end is
// asked only for those.
bool StartsQuery(const std::vector<SqlToken>& tokens, std::size_t begin, std::size_t end);

}  // namespace mssql_cdc::sim_server::tsql
