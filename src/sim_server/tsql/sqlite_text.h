// Pieces of SQLite text the front end writes: quoted strings and identifiers.
#pragma once

#include <string>
#include <string_view>

namespace mssql_cdc::sim_server::tsql {

// `text` between `quote`s, each quote inside doubled.
inline std::string Quoted(std::string_view text, char quote) {
  std::string quoted(1, quote);
  for (char c : text) {
    quoted += c;
    if (c == quote) quoted += quote;
  }
  return quoted + quote;
}

// A string literal: 'text'.
inline std::string SqlString(std::string_view text) { return Quoted(text, '\''); }
// An identifier: "name".
inline std::string SqlName(std::string_view name) { return Quoted(name, '"'); }

}  // namespace mssql_cdc::sim_server::tsql
