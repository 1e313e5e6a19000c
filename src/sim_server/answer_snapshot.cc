// Current rows of a source table, whole or in key ranges, streamed from its data table
// (sim/storage.h); the keyset seeks and row count that plan those ranges. A column the query
// casts from NULL is sent as NULL of the type it names. Bounds arrive as text CAST to the
// key's type, converted as SQL Server converts them (sim::EncodeCastText), so the comparison
// is between stored forms.
#include "core/errors.h"
#include "core/int128.h"
#include "core/time.h"
#include "sim/storage.h"
#include "sim/value_codec.h"
#include "sim_server/answers.h"
#include "sim_server/key_tally.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/source_tables.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/stored_value.h"

namespace mssql_cdc::sim_server {

const sim::ColumnInfo& RequireColumn(const sim::TableInfo& table, const std::string& name) {
  for (const auto& column : table.columns) {
    if (EqualsIgnoringCase(column.name, name)) return column;
  }
  throw SqlError(errors::InvalidColumnName(name));
}

sim::TableInfo ReadableTable(Session& session, const std::string& schema, const std::string& name) {
  const auto table = FindSourceTable(session.catalog(), schema, name);
  if (!table) throw SqlError(errors::InvalidObjectName(schema + "." + name));
  if (!session.access().CanReadTable(table->name)) {
    throw SqlError(errors::SelectPermissionDenied(table->name.name, session.database_name(),
                                                  table->name.schema));
  }
  return *table;
}

std::string StorageName(const sim::TableInfo& table) {
  return sim::QuoteIdent(sim::SourceTableStorageName(table.name.schema, table.name.name));
}

namespace {

// A piece's conditions as SQLite text, their values (stored forms) appended to `values`.
std::string WhereOf(const sim::TableInfo& table, const KeyPiece& piece,
                    std::vector<sim::Value>* values) {
  std::string sql;
  for (const KeyCondition& condition : piece) {
    const sim::ColumnInfo& column = RequireColumn(table, condition.column);
    sql += sql.empty() ? " WHERE " : (condition.or_before ? " OR " : " AND ");
    sql += std::string(static_cast<std::size_t>(condition.opens), '(');
    if (condition.op == "IS NULL") {
      sql += sim::QuoteIdent(column.name) + " IS NULL";
    } else if (const auto text = AsText(condition.value); !text) {
      sql += "0";  // a NULL bound compares unknown: no row meets it
    } else {
      const SqlType& type = condition.literal ? column.type : condition.cast_type;
      try {
        values->push_back(sim::EncodeCastText(type, *text, column.name));
      } catch (const ConfigError&) {
        throw SqlError(errors::ConversionFailed(*text, "nvarchar", type.ToString()));
      }
      sql += sim::QuoteIdent(column.name) + " " + condition.op + " ?" + std::to_string(values->size());
    }
    sql += std::string(static_cast<std::size_t>(condition.closes), ')');
  }
  return sql;
}

// "SELECT <select> FROM t WHERE ... UNION ALL SELECT ..." over the pieces.
std::string UnionOf(const sim::TableInfo& table, const std::string& select,
                    const std::vector<KeyPiece>& pieces, std::vector<sim::Value>* values) {
  std::string sql;
  for (const KeyPiece& piece : pieces) {
    if (!sql.empty()) sql += " UNION ALL ";
    sql += "SELECT " + select + " FROM " + StorageName(table) + WhereOf(table, piece, values);
  }
  return sql;
}

std::string OrderBy(const sim::TableInfo& table, const std::vector<std::string>& keys,
                    bool descending) {
  std::string order;
  for (const std::string& key : keys) {
    order += (order.empty() ? " ORDER BY " : ", ") + sim::QuoteIdent(RequireColumn(table, key).name);
    if (descending) order += " DESC";
  }
  return order;
}

void BindAll(sim::Statement& statement, const std::vector<sim::Value>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    statement.Bind(static_cast<int>(i) + 1, values[i]);
  }
}

// The key columns a seek selects, in the data table's spelling, and their result columns.
std::string KeySelect(const sim::TableInfo& table, const std::vector<KeyText>& select,
                      std::vector<tds::ResultColumn>* result) {
  std::string sql;
  for (const KeyText& text : select) {
    const sim::ColumnInfo& column = RequireColumn(table, text.column);
    sql += (sql.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
    result->push_back(text.raw ? Column(column.name, column.type, column.nullable) : Column("", text.type));
  }
  return sql;
}

// The stored key as the text CAST reads back: digits, the text itself, or 0x hex.
void SendKeyText(sqlite3_stmt* row, int column, tds::ResultSet& out) {
  sqlite3_value* value = sqlite3_column_value(row, column);
  switch (sqlite3_value_type(value)) {
    case SQLITE_NULL:
      out.Null();
      return;
    case SQLITE_BLOB: {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto* bytes = static_cast<const unsigned char*>(sqlite3_value_blob(value));
      const int size = sqlite3_value_bytes(value);
      std::string text = "0x";
      for (int i = 0; i < size; ++i) {
        text += kHex[bytes[i] >> 4];
        text += kHex[bytes[i] & 15];
      }
      out.Text(text);
      return;
    }
    default: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
      out.Text(std::string_view(text, static_cast<std::size_t>(sqlite3_value_bytes(value))));
      return;
    }
  }
}

void SendKeyRow(sim::Statement& seek, const std::vector<KeyText>& select, tds::ResultSet& rows) {
  if (!seek.Step()) return;
  for (std::size_t i = 0; i < select.size(); ++i) {
    if (select[i].raw) {
      PassStoredValue(seek.raw(), static_cast<int>(i), rows);
    } else {
      SendKeyText(seek.raw(), static_cast<int>(i), rows);
    }
  }
  rows.EndRow();
}

}  // namespace

void Answer(Session& session, const SnapshotRowsQuery& query, tds::ReplyWriter& reply) {
  const auto found = FindSourceTable(session.catalog(), query.schema, query.table);
  if (!found) throw SqlError(errors::InvalidObjectName(query.schema + "." + query.table));
  const sim::TableInfo& table = *found;

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
    const sim::ColumnInfo& column = RequireColumn(table, ref.name);
    result.push_back(Column(ref.name, column.type, column.nullable));
    positions.push_back(selected++);
    select += (select.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
  }
  std::vector<sim::Value> values;
  const std::string sql = UnionOf(table, select.empty() ? std::string("1") : select, query.pieces,
                                  &values) +
                          OrderBy(table, query.key_columns, false);
  ReadableTable(session, query.schema, query.table);

  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease scan = session.statements().Prepare(sql);
  BindAll(*scan, values);
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

void Answer(Session& session, const KeyAtQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  std::vector<tds::ResultColumn> result;
  const std::string select = KeySelect(table, query.select, &result);
  const auto offset = AsInteger(query.offset);
  if (!offset || *offset < 0) {
    throw SqlError(errors::ConversionFailed(offset ? std::to_string(*offset) : "NULL", "bigint",
                                            "OFFSET"));
  }
  std::vector<sim::Value> values;
  std::string sql = UnionOf(table, select, query.pieces, &values);
  // ORDER BY in a compound SELECT names result columns: the key columns are all of them.
  sql += OrderBy(table, query.key_columns, false) + " LIMIT 1 OFFSET " + std::to_string(*offset);
  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease seek = session.statements().Prepare(sql);
  BindAll(*seek, values);
  SendKeyRow(*seek, query.select, rows);
}

void Answer(Session& session, const LastKeyQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  std::vector<tds::ResultColumn> result;
  const std::string select = KeySelect(table, query.select, &result);
  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease last = session.statements().Prepare(
      "SELECT " + select + " FROM " + StorageName(table) +
      OrderBy(table, query.key_columns, true) + " LIMIT 1");
  SendKeyRow(*last, query.select, rows);
}

void Answer(Session& session, const KeySlicesQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  const sim::ColumnInfo& column = RequireColumn(table, query.column);
  const auto start = AsInteger(query.start);
  const auto width = AsInteger(query.width);
  const auto from = AsInteger(query.from);
  const auto end = AsInteger(query.end);
  tds::ResultSet& rows = reply.BeginResult({Column("slice", types::Bigint()),
                                            Column("rows", types::Bigint(), false),
                                            Column("key_sum", types::Decimal38())});
  if (!start || !width || !from || !end) return;  // NULL compares unknown: no row
  if (*width == 0) throw SqlError(errors::DivideByZero());
  // The keys in order, tallied as they come: SQLite's SUM stops at 64 bits, decimal(38,0) does not.
  // A date is stored as 'YYYY-MM-DD' text, which orders as the dates do; its day number is
  // compared with the bounds here.
  const std::string name = sim::QuoteIdent(column.name);
  StatementLease keys = session.statements().Prepare(
      query.day_number ? "SELECT " + name + " FROM " + StorageName(table) + " WHERE " + name + " IS NOT NULL ORDER BY " + name
                       : "SELECT " + name + " FROM " + StorageName(table) + " WHERE " + name + " >= ?1 AND " + name +
                             " < ?2 ORDER BY " + name);
  if (!query.day_number) {
    keys->BindInt(1, *from);
    keys->BindInt(2, *end);
  }
  auto key_of = [&]() -> std::optional<std::int64_t> {
    if (!query.day_number) return keys->Int(0);
    const auto day = ParseDateDays(keys->TextView(0));
    if (!day) throw InternalError("sim serve: DATEDIFF(day, ...) over " + column.name + ", which holds no date");
    if (*day < *from || *day >= *end) return std::nullopt;
    return *day;
  };
  KeyTally tally(rows);
  while (keys->Step()) {
    const auto in_range = key_of();
    if (!in_range) continue;
    // (k - start) / width in T-SQL's integer arithmetic, which truncates toward zero.
    const std::int64_t key = *in_range;
    tally.Add(static_cast<std::int64_t>((Int128(key) - *start) / *width), key);
  }
  tally.Finish();
}

void Answer(Session& session, const SpaceUsedQuery& query, tds::ReplyWriter& reply) {
  const auto text = AsText(query.object_name);
  const auto name = text ? ParseObjectName(*text) : std::nullopt;
  const auto table = name ? FindSourceTable(session.catalog(), name->schema, name->name)
                          : std::nullopt;
  if (!table || !session.access().CanReadTable(table->name)) {
    // What sp_spaceused raises for an object the database does not hold or the login cannot
    // see.
    throw SqlError(errors::ObjectNotInDatabase(text.value_or("NULL"), session.database_name()));
  }
  StatementLease count = session.statements().Prepare("SELECT COUNT(*) FROM " + StorageName(*table));
  const std::int64_t rows = count->Step() ? count->Int(0) : 0;
  tds::ResultSet& result = reply.BeginResult(
      {Column("name", types::Nvarchar(128)), Column("rows", SqlType::Parse("char(20)")),
       Column("reserved", SqlType::Parse("varchar(18)")), Column("data", SqlType::Parse("varchar(18)")),
       Column("index_size", SqlType::Parse("varchar(18)")), Column("unused", SqlType::Parse("varchar(18)"))});
  result.Text(table->name.name);
  std::string count_text = std::to_string(rows);
  count_text.resize(20, ' ');
  result.Text(count_text);
  for (int i = 0; i < 4; ++i) result.Text("0 KB");
  result.EndRow();
}

}  // namespace mssql_cdc::sim_server
