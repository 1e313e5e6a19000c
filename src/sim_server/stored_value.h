// Hands one value of a SQLite result row to a ResultSet in the call of its storage class. The
// simulator stores each SQL Server type in the form ResultSet takes (sim/storage.h,
// tds/query_handler.h), so values pass through as they are, without a copy.
#pragma once

#include <sqlite3.h>

#include <string_view>

#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

inline void PassStoredValue(sqlite3_stmt* row, int column, tds::ResultSet& out) {
  switch (sqlite3_column_type(row, column)) {
    case SQLITE_NULL:
      out.Null();
      break;
    case SQLITE_INTEGER:
      out.Int(sqlite3_column_int64(row, column));
      break;
    case SQLITE_FLOAT:
      out.Float(sqlite3_column_double(row, column));
      break;
    case SQLITE_TEXT: {
      // The pointer first, then the size, as SQLite asks.
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(row, column));
      out.Text(std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(row, column))));
      break;
    }
    default: {
      const auto* bytes = static_cast<const char*>(sqlite3_column_blob(row, column));
      const auto size = static_cast<std::size_t>(sqlite3_column_bytes(row, column));
      out.Binary(size == 0 ? std::string_view() : std::string_view(bytes, size));
      break;
    }
  }
}

}  // namespace mssql_cdc::sim_server
