// What mssql-cdc-pyspark 0.8.0 asks of a source table's key to plan a chunked snapshot and
// reconcile: its MIN and MAX, the first keys of NTILE tiles, and rows and key sums per bucket
// of a fixed width. Read from the table's data table (sim/storage.h) in key order.
#include "core/int128.h"
#include "core/time.h"
#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/key_tally.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/source_tables.h"
#include "sim_server/sql_tokens.h"
#include "sim_server/stored_value.h"

namespace mssql_cdc::sim_server {
namespace {

// floor(a / b) for b > 0: T-SQL's CASE WHEN a >= 0 THEN a / b ELSE (a + 1) / b - 1 END.
std::int64_t FloorDiv64(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : (a + 1) / b - 1; }

}  // namespace

void Answer(Session& session, const KeyRangeQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  const sim::ColumnInfo& column = RequireColumn(table, query.column);
  const std::string name = sim::QuoteIdent(column.name);
  std::string sql = "SELECT MIN(" + name + "), MAX(" + name + ") FROM " + StorageName(table);
  const auto lo = query.bounded ? AsInteger(query.lo) : std::nullopt;
  const auto hi = query.bounded ? AsInteger(query.hi) : std::nullopt;
  if (query.bounded) sql += " WHERE " + name + " >= ?1 AND " + name + " < ?2";
  tds::ResultSet& rows = reply.BeginResult({Column("lo", column.type), Column("hi", column.type)});
  if (query.bounded && (!lo || !hi)) {  // a NULL bound compares unknown: MIN and MAX of nothing
    rows.Null();
    rows.Null();
    rows.EndRow();
    return;
  }
  StatementLease extent = session.statements().Prepare(sql);
  if (query.bounded) extent->BindInt(1, *lo).BindInt(2, *hi);
  extent->Step();
  PassStoredValue(extent->raw(), 0, rows);
  PassStoredValue(extent->raw(), 1, rows);
  rows.EndRow();
}

void Answer(Session& session, const KeyTilesQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  if (query.tiles < 1) throw SqlError(errors::NtileArgumentNotPositive());
  std::vector<tds::ResultColumn> result;
  std::string keys;
  for (const std::string& key : query.key_columns) {
    const sim::ColumnInfo& column = RequireColumn(table, key);
    result.push_back(Column(column.name, column.type, column.nullable));
    keys += (keys.empty() ? "" : ", ") + sim::QuoteIdent(column.name);
  }
  tds::ResultSet& rows = reply.BeginResult(result);
  StatementLease count = session.statements().Prepare("SELECT COUNT(*) FROM " + StorageName(table));
  const std::int64_t total = count->Step() ? count->Int(0) : 0;
  // NTILE(n) gives the first (total % n) tiles one row more than the others.
  std::int64_t offset = 0;
  for (std::int64_t tile = 0; tile + 1 < query.tiles && tile < total; ++tile) {
    offset += total / query.tiles + (tile < total % query.tiles ? 1 : 0);
    if (offset >= total) break;
    StatementLease seek = session.statements().Prepare("SELECT " + keys + " FROM " + StorageName(table) +
                                                       " ORDER BY " + keys + " LIMIT 1 OFFSET ?1");
    seek->BindInt(1, offset);
    if (!seek->Step()) break;
    for (int i = 0; i < static_cast<int>(result.size()); ++i) PassStoredValue(seek->raw(), i, rows);
    rows.EndRow();
  }
}

void Answer(Session& session, const KeyBucketsQuery& query, tds::ReplyWriter& reply) {
  const sim::TableInfo table = ReadableTable(session, query.schema, query.table);
  tds::ResultSet& rows = reply.BeginResult(
      {Column("b", types::Bigint()), Column("n", types::Bigint(), false), Column("s", types::Decimal38())});
  if (query.column.empty()) {
    StatementLease count = session.statements().Prepare("SELECT COUNT(*) FROM " + StorageName(table));
    rows.Int(0);
    rows.Int(count->Step() ? count->Int(0) : 0);
    rows.Null();
    rows.EndRow();
    return;
  }
  if (query.width == 0) throw SqlError(errors::DivideByZero());
  const sim::ColumnInfo& column = RequireColumn(table, query.column);
  const std::string name = sim::QuoteIdent(column.name);
  std::string sql = "SELECT " + name + " FROM " + StorageName(table) + " WHERE " + name + " IS NOT NULL";
  const auto lo = query.lo ? AsInteger(*query.lo) : std::nullopt;
  const auto hi = query.hi ? AsInteger(*query.hi) : std::nullopt;
  if ((query.lo && !lo) || (query.hi && !hi)) return;  // a NULL bound compares unknown: no rows
  if (lo) sql += " AND " + name + " >= ?1";
  if (hi) sql += " AND " + name + " < ?2";
  StatementLease keys = session.statements().Prepare(sql + " ORDER BY " + name);
  if (lo) keys->BindInt(1, *lo);
  if (hi) keys->BindInt(2, *hi);
  // Tallied in key order, so each bucket's rows come together.
  KeyTally tally(rows);
  while (keys->Step()) {
    std::int64_t ordinal = 0;
    if (query.day_number) {
      const auto day = ParseDateDays(keys->TextView(0).substr(0, 10));
      if (!day) throw SqlError(errors::ConversionFailed(std::string(keys->TextView(0)), "nvarchar", "date"));
      ordinal = *day;
    } else {
      ordinal = keys->Int(0);
    }
    tally.Add(FloorDiv64(ordinal, query.width), ordinal);
  }
  tally.Finish();
}

}  // namespace mssql_cdc::sim_server
