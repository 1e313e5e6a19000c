// Hands one value of a SQLite result row to a ResultSet in the call of its storage class. The
// simulator stores each SQL Server type in the form ResultSet takes (sim/storage.h,
// tds/query_handler.h), so values pass through as they are, without a copy.
#pragma once

#include <sqlite3.h>

#include <string_view>

#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

inline void PassStoredValue(sqlite3_stmt* row, int column, tds::ResultSet& out) {
  // The column's value once, read with the sqlite3_value_* calls: the sqlite3_column_*
  // ones each look the column up again and check the connection for a failed allocation.
  // Safe on the connections of sim/sqlite.h, which have no mutex.
  sqlite3_value* value = sqlite3_column_value(row, column);
  switch (sqlite3_value_type(value)) {
    case SQLITE_NULL:
      out.Null();
      break;
    case SQLITE_INTEGER:
      out.Int(sqlite3_value_int64(value));
      break;
    case SQLITE_FLOAT:
      out.Float(sqlite3_value_double(value));
      break;
    case SQLITE_TEXT: {
      // The pointer first, then the size, as SQLite asks.
      const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
      out.Text(std::string_view(text, static_cast<std::size_t>(sqlite3_value_bytes(value))));
      break;
    }
    default: {
      const auto* bytes = static_cast<const char*>(sqlite3_value_blob(value));
      const auto size = static_cast<std::size_t>(sqlite3_value_bytes(value));
      out.Binary(size == 0 ? std::string_view() : std::string_view(bytes, size));
      break;
    }
  }
}

}  // namespace mssql_cdc::sim_server
