// Current rows of a source table in key order, streamed from its data table (sim/storage.h).
// A column the query casts from NULL is sent as NULL of the type it names.
#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/stored_value.h"

namespace mssql_cdc::sim_server {
namespace {

const sim::ColumnInfo& RequireColumn(const sim::TableInfo& table, const std::string& name) {
  for (const auto& column : table.columns) {
    if (EqualsIgnoringCase(column.name, name)) return column;
  }
  throw SqlError(errors::InvalidColumnName(name));
}

}  // namespace

void Answer(Session& session, const SnapshotRowsQuery& query, tds::ReplyWriter& reply) {
  const auto table = FindSourceTable(session.catalog(), query.schema, query.table);
  if (!table) throw SqlError(errors::InvalidObjectName(query.schema + "." + query.table));

  std::vector<tds::ResultColumn> result;
  // Per result column its position in the SQLite select list; -1 for a NULL cast.
  std::vector<int> positions;
  std::string select;
  int selected = 0;
  for (const SnapshotColumnRef& ref : query.columns) {
    if (!ref.present) {
      result.push_back(Column(ref.name, ref.cast_type));
      positions.push_back(-1);
      continue;
    }
    const sim::ColumnInfo& column = RequireColumn(*table, ref.name);
    result.push_back(Column(ref.name, column.type, column.nullable));
    positions.push_back(selected++);
    select += (select.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
  }
  std::string order;
  for (const std::string& key : query.key_columns) {
    order += (order.empty() ? " ORDER BY " : ", ") + sim::QuoteIdent(RequireColumn(*table, key).name);
  }
  if (!session.access().CanReadTable(table->name)) {
    throw SqlError(errors::SelectPermissionDenied(table->name.name, session.database_name(),
                                                  table->name.schema));
  }

  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease scan = session.statements().Prepare(
      "SELECT " + (select.empty() ? std::string("1") : select) + " FROM " +
      sim::QuoteIdent(sim::SourceTableStorageName(table->name.schema, table->name.name)) + order);
  sqlite3_stmt* row = scan->raw();
  while (scan->Step()) {
    for (int position : positions) {
      if (position < 0) {
        rows.Null();
      } else {
        PassStoredValue(row, position, rows);
      }
    }
    rows.EndRow();
  }
}

}  // namespace mssql_cdc::sim_server
