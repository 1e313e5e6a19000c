// Recognises the statements of one request to `mssql-cdc sim serve`: the shapes of
// source/odbc/statements.h and the few queries drivers send on their own.
//
// The text is tokenized (sql_tokens.h), so spacing, keyword case, comments and the quoting of
// plain names do not matter; `?` and `@P<n>` markers both take the request's parameters, and a
// literal may stand where a parameter would. A batch is split at top-level `;` into
// statements, each recognised alone: control statements (SET options, transactions) that lead
// a statement, with or without `;` after them, become a ControlStatements before it. A statement that matches no shape comes back as UnknownStatement.
#pragma once

#include <string_view>
#include <vector>

#include "sim_server/recognized_statement.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

// `database` is the session's: three-part names that name it read as their last two parts
// (`[sales].sys.fn_cdc_get_max_lsn()` as `sys.fn_cdc_get_max_lsn()`).
// Throws SqlError when the text cannot be read (an unclosed quote: 105) or a parameter
// marker has no value (137 for @P<n>, 102 for `?`).
std::vector<RecognizedStatement> RecognizeBatch(std::string_view sql,
                                                const std::vector<tds::ParamValue>& params,
                                                std::string_view database = {});

}  // namespace mssql_cdc::sim_server
