// Queries of no known shape, answered through the T-SQL front end: translated into one SQLite
// query (tsql/translator.h), whose rows are sent with the SQL Server types the translation gave.
#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim_server/answers.h"
#include "sim_server/tsql/translator.h"

namespace mssql_cdc::sim_server {
namespace {

std::string DecimalText(double value, int scale) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", scale, value);
  return buffer;
}

// One value in the call its declared type takes, whatever storage class SQLite computed it in.
void Send(sqlite3_value* value, const SqlType& type, tds::ResultSet& out) {
  const int storage = sqlite3_value_type(value);
  if (storage == SQLITE_NULL) return out.Null();
  const auto text = [&] {
    return std::string(reinterpret_cast<const char*>(sqlite3_value_text(value)),
                       static_cast<std::size_t>(sqlite3_value_bytes(value)));
  };
  switch (type.family()) {
    case SqlTypeFamily::kInteger:
      if (storage == SQLITE_FLOAT) return out.Int(static_cast<std::int64_t>(sqlite3_value_double(value)));
      return out.Int(sqlite3_value_int64(value));
    case SqlTypeFamily::kFloatingPoint:
      return out.Float(sqlite3_value_double(value));
    case SqlTypeFamily::kDecimal:
      if (storage == SQLITE_TEXT) return out.Text(text());
      return out.Text(DecimalText(sqlite3_value_double(value), type.scale));
    case SqlTypeFamily::kBinary:
    case SqlTypeFamily::kRowVersion: {
      const auto* bytes = static_cast<const char*>(sqlite3_value_blob(value));
      const auto size = static_cast<std::size_t>(sqlite3_value_bytes(value));
      return out.Binary(size == 0 ? std::string_view() : std::string_view(bytes, size));
    }
    default:
      return out.Text(text());
  }
}

}  // namespace

void Answer(Session& session, const FrontEndQuery& query, tds::ReplyWriter& reply) {
  const tsql::Translation translation = tsql::Translate(session, query.query);
  StatementLease statement = session.statements().Prepare(translation.sql);
  sqlite3_stmt* row = statement->raw();
  tsql::BindParameters(row, translation.parameters);
  tds::ResultSet& rows = reply.BeginResult(translation.columns);
  const int width = static_cast<int>(translation.columns.size());
  while (statement->Step()) {
    for (int i = 0; i < width; ++i) Send(sqlite3_column_value(row, i), translation.columns[i].type, rows);
    rows.EndRow();
  }
}

}  // namespace mssql_cdc::sim_server
