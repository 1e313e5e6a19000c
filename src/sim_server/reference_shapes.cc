// The shapes of the statements mssql-cdc-pyspark 0.8.0's SqlCdcClient sends, as it sends
// them to a server whose clock is UTC, and its AT TIME ZONE conversions for a server on
// another zone. LSNs go in as text through CONVERT(binary(10), ?, 1) and come back as
// CONVERT(varchar(22), lsn, 1); each shape is recognised into the query statements.h's form
// asks, with the flags that say how 0.8.0 wants the answer.
#include <optional>
#include <utility>

#include "core/errors.h"
#include "sim/value_codec.h"
#include "sim_server/server_errors.h"
#include "sim_server/shapes.h"
#include "sim_server/sql_tokens.h"

namespace mssql_cdc::sim_server {
namespace {

// The value of CONVERT(binary(10), text, 1): the bytes "0x..." spells, converted as the
// simulator converts every key bound (sim::EncodeCastText); NULL stays NULL.
SqlValue BinaryOfText(const SqlValue& value) {
  if (value.is_null() || value.kind == SqlValue::Kind::kBinary) return value;
  static const SqlType binary10 = SqlType::Parse("binary(10)");
  const std::string text = *AsText(value);
  SqlValue out;
  out.kind = SqlValue::Kind::kBinary;
  out.type_name = "binary";
  try {
    out.bytes = sim::EncodeCastText(binary10, text, "").as_bytes().data;
  } catch (const ConfigError&) {
    throw SqlError(errors::ConversionFailed(text, value.type_name, "binary"));
  }
  return out;
}

// CONVERT(binary(10), ?, 1): the LSN a parameter spells.
bool LsnArgument(TokenCursor& cursor, SqlValue* lsn) {
  static const Phrase convert("CONVERT(binary(10), ?, 1)");
  std::vector<SqlValue> values;
  if (!cursor.Match(convert, &values)) return false;
  *lsn = BinaryOfText(values[0]);
  return true;
}

// The zone every AT TIME ZONE of one 0.8.0 expression names: one text, the same each time.
bool SameZone(TokenCursor& cursor, const std::vector<SqlValue>& zones, SqlValue* zone) {
  for (const auto& named : zones) {
    if (named.is_null() || !AsText(named) || AsText(named) != AsText(zones.front())) return cursor.Reject();
  }
  *zone = zones.front();
  return true;
}

bool MaxLsnText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase("SELECT CONVERT(varchar(22), sys.fn_cdc_get_max_lsn(), 1)");
  if (!cursor.Match(phrase) || !cursor.End()) return false;
  *out = MaxLsnQuery{true};
  return true;
}

bool MinLsnText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase("SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(?), 1)");
  std::vector<SqlValue> values;
  if (!cursor.Match(phrase, &values) || !cursor.End()) return false;
  *out = MinLsnQuery{std::move(values[0]), true};
  return true;
}

bool LsnStepText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head("SELECT CONVERT(varchar(22), sys.");
  static const Phrase tail("), 1)");
  LsnStepQuery query;
  query.lsn_text = true;
  if (!cursor.Match(head)) return false;
  if (cursor.Keyword("fn_cdc_increment_lsn")) {
    query.increment = true;
  } else if (cursor.Keyword("fn_cdc_decrement_lsn")) {
    query.increment = false;
  } else {
    return cursor.Reject();
  }
  if (!cursor.Punct("(") || !LsnArgument(cursor, &query.lsn) || !cursor.Match(tail) || !cursor.End()) return false;
  *out = std::move(query);
  return true;
}

// 0.8.0's commit time of lsn_time_mapping entry m in UTC on a server in zone N'<zone>' (every
// `?` is that zone): AT TIME ZONE, but in the hour repeated after a fall-back the second
// reading when a commit within the three hours before m, in LSN order, went back in time.
bool ZonedUtcCommitTime(TokenCursor& cursor, SqlValue* zone) {
  static const Phrase expression(
      "CASE WHEN EXISTS (SELECT 1 FROM (SELECT d.start_lsn, d.t FROM (SELECT CASE WHEN "
      "(DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE ?) < DATEPART(TZOFFSET, "
      "m.tran_end_time AT TIME ZONE ?) AND DATEPART(TZOFFSET, DATEADD(minute, DATEPART(TZOFFSET, "
      "m.tran_end_time AT TIME ZONE ?) - DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT "
      "TIME ZONE ?), m.tran_end_time) AT TIME ZONE ?) = DATEPART(TZOFFSET, DATEADD(hour, 3, "
      "m.tran_end_time) AT TIME ZONE ?)) THEN COALESCE((SELECT TOP (1) start_lsn FROM "
      "cdc.lsn_time_mapping WHERE tran_end_time <= DATEADD(hour, -3, m.tran_end_time) ORDER BY "
      "tran_end_time DESC), 0x00000000000000000000) ELSE m.start_lsn END AS lo) b CROSS APPLY "
      "(SELECT start_lsn, tran_end_time AS t, LAG(tran_end_time) OVER (ORDER BY start_lsn) AS "
      "prev FROM cdc.lsn_time_mapping WHERE start_lsn > b.lo AND start_lsn <= m.start_lsn) d "
      "WHERE d.t < DATEADD(minute, -1, d.prev) AND (DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT "
      "TIME ZONE ?) < DATEPART(TZOFFSET, d.t AT TIME ZONE ?) AND DATEPART(TZOFFSET, "
      "DATEADD(minute, DATEPART(TZOFFSET, d.t AT TIME ZONE ?) - DATEPART(TZOFFSET, DATEADD(hour, "
      "3, d.t) AT TIME ZONE ?), d.t) AT TIME ZONE ?) = DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) "
      "AT TIME ZONE ?))) x WHERE x.start_lsn <= m.start_lsn AND x.t > DATEADD(hour, -3, "
      "m.tran_end_time)) THEN CAST(DATEADD(minute, -DATEPART(TZOFFSET, DATEADD(hour, 3, "
      "m.tran_end_time) AT TIME ZONE ?), m.tran_end_time) AS datetime2(3)) ELSE "
      "CAST((m.tran_end_time AT TIME ZONE ?) AT TIME ZONE 'UTC' AS datetime2(3)) END");
  std::vector<SqlValue> zones;
  return cursor.Match(expression, &zones) && SameZone(cursor, zones, zone);
}

// SELECT TOP (1) CONVERT(varchar(23), CAST(m.tran_end_time AS datetime2(3)), 126) FROM
// cdc.lsn_time_mapping m WHERE m.start_lsn (= | <=) CONVERT(binary(10), ?, 1) ORDER BY
// m.start_lsn DESC; on a server in another zone than UTC the commit time is converted
// (ZonedUtcCommitTime).
bool CommitTimeText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head("SELECT TOP (1) CONVERT(varchar(23),");
  static const Phrase utc("CAST(m.tran_end_time AS datetime2(3))");
  static const Phrase from(", 126) FROM cdc.lsn_time_mapping m WHERE m.start_lsn");
  static const Phrase tail("ORDER BY m.start_lsn DESC");
  CommitTimeQuery query;
  query.iso_text = true;
  if (!cursor.Match(head)) return false;
  if (SqlValue zone; !cursor.Match(utc)) {
    if (!ZonedUtcCommitTime(cursor, &zone)) return false;
    query.zone = std::move(zone);
  }
  if (!cursor.Match(from)) return false;
  if (cursor.Punct("<=")) {
    query.at_or_before = true;
  } else if (!cursor.Punct("=")) {
    return cursor.Reject();
  }
  if (!LsnArgument(cursor, &query.lsn) || !cursor.Match(tail) || !cursor.End()) return false;
  *out = std::move(query);
  return true;
}

bool TimeToLsnText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(
      "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn(N'largest less than or equal', "
      "CONVERT(datetime2(0), ?, 126)), 1)");
  static const Phrase zoned(
      "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn(N'largest less than or equal', (SELECT "
      "MIN(v) FROM (VALUES (CONVERT(datetime2(0), (CONVERT(datetime2(0), ?, 126) AT TIME ZONE 'UTC') AT "
      "TIME ZONE ?)), (DATEADD(hour, -1, CONVERT(datetime2(0), (DATEADD(hour, 1, CONVERT(datetime2(0), "
      "?, 126)) AT TIME ZONE 'UTC') AT TIME ZONE ?)))) x(v))), 1)");
  std::vector<SqlValue> values;
  if (cursor.Match(phrase, &values)) {
    if (!cursor.End()) return false;
    *out = TimeToLsnQuery{std::move(values[0]), true};
    return true;
  }
  // On a server in another zone than UTC: the UTC time turned into the server's clock.
  TimeToLsnQuery query{{}, true};
  SqlValue zone;
  values.clear();
  if (!cursor.Match(zoned, &values) || !cursor.End() || !SameZone(cursor, {values[1], values[3]}, &zone)) {
    return false;
  }
  query.time = std::move(values[0]);
  query.time2 = std::move(values[2]);
  query.zone = std::move(zone);
  *out = std::move(query);
  return true;
}

// SELECT CONVERT(varchar(22), MAX(start_lsn), 1) FROM (SELECT TOP (n) start_lsn FROM
// cdc.lsn_time_mapping WHERE start_lsn > CONVERT(binary(10), ?, 1) ORDER BY start_lsn) t
bool NthCommitAfterText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head("SELECT CONVERT(varchar(22), MAX(start_lsn), 1) FROM (SELECT TOP (");
  static const Phrase middle(") start_lsn FROM cdc.lsn_time_mapping WHERE start_lsn >");
  static const Phrase tail("ORDER BY start_lsn) t");
  NthCommitAfterQuery query;
  query.lsn_text = true;
  if (!cursor.Match(head) || !cursor.Value(&query.count) || !cursor.Match(middle) ||
      !LsnArgument(cursor, &query.after) || !cursor.Match(tail) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

bool SplitPointsText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head(
      "SELECT CONVERT(varchar(22), MAX(__$start_lsn), 1) AS b, CONVERT(varchar(22), "
      "sys.fn_cdc_increment_lsn(MAX(__$start_lsn)), 1) AS n, COUNT_BIG(*) AS r FROM (SELECT "
      "__$start_lsn, NTILE(");
  static const Phrase over(") OVER (ORDER BY __$start_lsn) AS g FROM cdc.");
  static const Phrase where("WHERE __$start_lsn BETWEEN");
  static const Phrase tail(") x GROUP BY g ORDER BY b");
  SplitPointsQuery query;
  query.lsn_text = true;
  if (!cursor.Match(head) || !cursor.Integer(&query.tiles) || !cursor.Match(over) ||
      !cursor.Name(&query.change_table) || !cursor.Match(where) || !LsnArgument(cursor, &query.from) ||
      !cursor.Keyword("and") || !LsnArgument(cursor, &query.to) || !cursor.Match(tail) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

bool TableColumns(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase computed("SELECT name, column_id, is_computed FROM sys.columns");
  static const Phrase collation("SELECT name, collation_name FROM sys.columns");
  static const Phrase where("WHERE object_id = OBJECT_ID(QUOTENAME(?) + '.' + QUOTENAME(?))");
  TableColumnsQuery query;
  if (cursor.Match(collation)) {
    query.collation = true;
  } else if (!cursor.Match(computed)) {
    return false;
  }
  std::vector<SqlValue> values;
  if (!cursor.Match(where, &values) || !cursor.End()) return false;
  query.schema = std::move(values[0]);
  query.table = std::move(values[1]);
  *out = std::move(query);
  return true;
}

// (SELECT MIN|MAX([k]) FROM table [WHERE [k] >= ? AND [k] < ?])
// Names, each followed by a comma, up to the name `next` (not consumed): "a, b, [__$tile]".
bool KeysBefore(TokenCursor& cursor, std::string_view next, std::vector<std::string>* names) {
  while (true) {
    TokenCursor ahead = cursor;
    std::string name;
    if (!ahead.Name(&name)) return false;
    if (EqualsIgnoringCase(name, next)) return !names->empty() || cursor.Reject();
    if (!ahead.Punct(",")) return false;
    names->push_back(std::move(name));
    cursor = ahead;
  }
}

bool Extreme(TokenCursor& cursor, std::string_view function, KeyRangeQuery* query) {
  static const Phrase select("(SELECT");
  static const Phrase where("WHERE");
  std::string column, schema, table;
  if (!cursor.Match(select) || !cursor.Keyword(function) || !cursor.Punct("(") || !cursor.Name(&column) ||
      !cursor.Punct(")") || !cursor.Keyword("from") || !TableName(cursor, &schema, &table)) {
    return false;
  }
  bool bounded = false;
  SqlValue lo, hi;
  if (cursor.Match(where)) {
    std::string again, last;
    if (!cursor.Name(&again) || !cursor.Punct(">=") || !cursor.Value(&lo) || !cursor.Keyword("and") ||
        !cursor.Name(&last) || !cursor.Punct("<") || !cursor.Value(&hi) || again != column || last != column) {
      return cursor.Reject();
    }
    bounded = true;
  }
  if (!cursor.Punct(")")) return false;
  if (query->column.empty()) {
    query->column = column;
    query->schema = schema;
    query->table = table;
    query->bounded = bounded;
    query->lo = lo;
    query->hi = hi;
    return true;
  }
  // The second subquery asks of the same key and range as the first.
  return (column == query->column && schema == query->schema && table == query->table &&
          bounded == query->bounded) ||
         cursor.Reject();
}

bool KeyRange(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase as_lo("AS lo,");
  static const Phrase as_hi("AS hi");
  KeyRangeQuery query;
  if (!cursor.Keyword("select") || !Extreme(cursor, "min", &query) || !cursor.Match(as_lo) ||
      !Extreme(cursor, "max", &query) || !cursor.Match(as_hi) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

// SELECT keys FROM (SELECT keys, [__$tile], LAG([__$tile]) OVER (ORDER BY keys) AS [__$prev]
// FROM (SELECT keys, NTILE(n) OVER (ORDER BY keys) AS [__$tile] FROM table) a) b
// WHERE [__$tile] <> [__$prev] ORDER BY [__$tile]
bool KeyTiles(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase lag("[__$tile], LAG([__$tile]) OVER (ORDER BY");
  static const Phrase prev(") AS [__$prev] FROM (SELECT");
  static const Phrase ntile("NTILE(");
  static const Phrase over(") OVER (ORDER BY");
  static const Phrase tile(") AS [__$tile] FROM");
  static const Phrase tail(") a) b WHERE [__$tile] <> [__$prev] ORDER BY [__$tile]");
  KeyTilesQuery query;
  std::vector<std::string> lists[5];
  if (!cursor.Keyword("select") || !NameList(cursor, &lists[0]) || !cursor.Keyword("from") ||
      !cursor.Punct("(") || !cursor.Keyword("select") || !KeysBefore(cursor, "__$tile", &lists[1]) ||
      !cursor.Match(lag) || !NameList(cursor, &lists[2]) || !cursor.Match(prev) ||
      !KeysBefore(cursor, "NTILE", &lists[3]) || !cursor.Match(ntile) || !cursor.Integer(&query.tiles) ||
      !cursor.Match(over) || !NameList(cursor, &lists[4]) || !cursor.Match(tile) ||
      !TableName(cursor, &query.schema, &query.table) || !cursor.Match(tail) || !cursor.End()) {
    return false;
  }
  for (int i = 1; i < 5; ++i) {
    if (lists[i] != lists[0]) return cursor.Reject();
  }
  query.key_columns = std::move(lists[0]);
  *out = std::move(query);
  return true;
}

// SELECT TOP (1) keys FROM table ORDER BY keys DESC
bool LastKeyRaw(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase top("SELECT TOP (1)");
  static const Phrase order_by("ORDER BY");
  LastKeyQuery query;
  std::vector<std::string> keys;
  if (!cursor.Match(top) || !NameList(cursor, &keys) || !cursor.Keyword("from") ||
      !TableName(cursor, &query.schema, &query.table) || !cursor.Match(order_by) ||
      !NameList(cursor, &query.key_columns, /*descending=*/true) || !cursor.End()) {
    return false;
  }
  for (auto& key : keys) query.select.push_back(KeyText{std::move(key), SqlType(), true});
  *out = std::move(query);
  return true;
}

// SELECT keys FROM (SELECT * FROM (SELECT TOP (n + 1) keys FROM table [WHERE piece] ORDER BY
// keys) p [UNION ALL SELECT * FROM (...) p]...) u ORDER BY keys OFFSET n ROWS FETCH NEXT 1 ROWS ONLY
bool KeyBound(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase branch("SELECT * FROM (SELECT TOP (");
  static const Phrase branch_end(") p");
  static const Phrase union_all("UNION ALL");
  static const Phrase derived(") u ORDER BY");
  static const Phrase offset("OFFSET ? ROWS FETCH NEXT 1 ROWS ONLY");
  static const Phrase order_by("ORDER BY");
  KeyAtQuery query;
  std::vector<std::string> keys;
  if (!cursor.Keyword("select") || !NameList(cursor, &keys) || !cursor.Keyword("from") || !cursor.Punct("(")) {
    return false;
  }
  do {
    std::int64_t top = 0;
    std::vector<std::string> selected, ordered;
    KeyPiece piece;
    if (!cursor.Match(branch) || !cursor.Integer(&top) || !cursor.Punct(")") || !NameList(cursor, &selected) ||
        !cursor.Keyword("from") || !TableName(cursor, &query.schema, &query.table) || !Piece(cursor, &piece) ||
        !cursor.Match(order_by) || !NameList(cursor, &ordered) || !cursor.Match(branch_end)) {
      return false;
    }
    if (selected != keys || ordered != keys) return cursor.Reject();
    query.pieces.push_back(std::move(piece));
  } while (cursor.Match(union_all));
  std::vector<SqlValue> values;
  if (!cursor.Match(derived) || !NameList(cursor, &query.key_columns) || !cursor.Match(offset, &values) ||
      !cursor.End()) {
    return false;
  }
  if (query.key_columns != keys) return cursor.Reject();
  for (auto& key : keys) query.select.push_back(KeyText{std::move(key), SqlType(), true});
  query.offset = std::move(values[0]);
  *out = std::move(query);
  return true;
}

// The ordinal of a bucket key: CAST([k] AS bigint), or CAST(DATEDIFF(day, CAST('19700101' AS
// date), [k]) AS bigint) for a date.
bool BucketOrdinal(TokenCursor& cursor, std::string* column, bool* day_number) {
  static const Phrase cast("CAST(");
  static const Phrase datediff("DATEDIFF(day, CAST(? AS date),");
  static const Phrase as_bigint("AS bigint)");
  if (!cursor.Match(cast)) return false;
  std::vector<SqlValue> origin;
  *day_number = cursor.Match(datediff, &origin);
  if (*day_number && AsText(origin[0]) != std::optional<std::string>("19700101")) return cursor.Reject();
  if (!cursor.Name(column)) return false;
  if (*day_number && !cursor.Punct(")")) return false;
  return cursor.Match(as_bigint);
}

// SELECT [__$b] AS b, COUNT_BIG(*) AS n, SUM(CAST([__$o] AS decimal(38,0))) AS s FROM (SELECT
// <ord> AS [__$o], CASE WHEN <ord> >= 0 THEN <ord> / CAST(w AS bigint) ELSE (<ord> + 1) /
// CAST(w AS bigint) - 1 END AS [__$b] FROM table WHERE [k] IS NOT NULL [AND [k] >= lo]
// [AND [k] < hi]) x GROUP BY [__$b]; or, without a key, SELECT CAST(0 AS bigint) AS b,
// COUNT_BIG(*) AS n, CAST(NULL AS decimal(38,0)) AS s FROM table
bool KeyBuckets(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase whole("SELECT CAST(0 AS bigint) AS b, COUNT_BIG(*) AS n, CAST(NULL AS decimal(38,0)) AS s FROM");
  static const Phrase head(
      "SELECT [__$b] AS b, COUNT_BIG(*) AS n, SUM(CAST([__$o] AS decimal(38,0))) AS s FROM (SELECT");
  static const Phrase as_o("AS [__$o], CASE WHEN");
  static const Phrase nonnegative(">= 0 THEN");
  static const Phrase cast_width("/ CAST(");
  static const Phrase as_bigint("AS bigint)");
  static const Phrase else_open("ELSE (");
  static const Phrase plus_one("+ 1) / CAST(");
  static const Phrase minus_one("AS bigint) - 1 END AS [__$b] FROM");
  static const Phrase not_null("IS NOT NULL");
  static const Phrase tail(") x GROUP BY [__$b]");
  KeyBucketsQuery query;
  if (cursor.Match(whole)) {
    if (!TableName(cursor, &query.schema, &query.table) || !cursor.End()) return false;
    *out = std::move(query);
    return true;
  }
  std::string columns[4];
  bool days[4];
  std::int64_t widths[2];
  if (!cursor.Match(head) || !BucketOrdinal(cursor, &columns[0], &days[0]) || !cursor.Match(as_o) ||
      !BucketOrdinal(cursor, &columns[1], &days[1]) || !cursor.Match(nonnegative) ||
      !BucketOrdinal(cursor, &columns[2], &days[2]) || !cursor.Match(cast_width) || !cursor.Integer(&widths[0]) ||
      !cursor.Match(as_bigint) || !cursor.Match(else_open) || !BucketOrdinal(cursor, &columns[3], &days[3]) ||
      !cursor.Match(plus_one) || !cursor.Integer(&widths[1]) || !cursor.Match(minus_one) ||
      !TableName(cursor, &query.schema, &query.table) || !cursor.Keyword("where")) {
    return false;
  }
  std::string key;
  if (!cursor.Name(&key) || !cursor.Match(not_null)) return false;
  // Either bound alone, or both: 0.8.0 leaves out the lower one for the first slices.
  while (cursor.Keyword("and")) {
    std::string again;
    SqlValue bound;
    if (!cursor.Name(&again) || again != key) return cursor.Reject();
    if (!query.lo && !query.hi && cursor.Punct(">=")) {
      if (!cursor.Value(&bound)) return false;
      query.lo = std::move(bound);
    } else if (!query.hi && cursor.Punct("<")) {
      if (!cursor.Value(&bound)) return false;
      query.hi = std::move(bound);
    } else {
      return cursor.Reject();
    }
  }
  if (!cursor.Match(tail) || !cursor.End()) return false;
  for (int i = 1; i < 4; ++i) {
    if (columns[i] != columns[0] || days[i] != days[0]) return cursor.Reject();
  }
  const bool bounded = query.lo || query.hi;
  if (key != columns[0] || widths[0] != widths[1] || (days[0] && bounded)) return cursor.Reject();
  query.column = key;
  query.day_number = days[0];
  query.width = widths[0];
  *out = std::move(query);
  return true;
}

// 0.8.0's commit time of a change row on a server in another zone than UTC whose offset changes
// within the range: [CASE WHEN EXISTS (... (VALUES (lsn, time), ...) ...) THEN <offset three
// hours later> ELSE] <AT TIME ZONE> [END].
bool ZonedCommitTimesText(TokenCursor& cursor, ChangeRowsQuery::ZonedCommitTimes* zoned) {
  static const Phrase exists("CASE WHEN EXISTS (SELECT 1 FROM (SELECT * FROM (VALUES");
  static const Phrase drop("(CONVERT(binary(10), ?, 1), CONVERT(datetime, ?, 126))");
  static const Phrase later(
      ") v(start_lsn, t)) x WHERE x.start_lsn <= m.start_lsn AND x.t > DATEADD(hour, -3, m.tran_end_time)) THEN "
      "CAST(DATEADD(minute, -DATEPART(TZOFFSET, DATEADD(hour, 3, m.tran_end_time) AT TIME ZONE ?), "
      "m.tran_end_time) AS datetime2(3)) ELSE");
  static const Phrase at_time_zone("CAST((m.tran_end_time AT TIME ZONE ?) AT TIME ZONE 'UTC' AS datetime2(3))");
  std::vector<SqlValue> zones;
  const bool with_drops = cursor.Match(exists);
  if (with_drops) {
    do {
      std::vector<SqlValue> values;
      if (!cursor.Match(drop, &values)) return false;
      zoned->drops.emplace_back(BinaryOfText(values[0]), std::move(values[1]));
    } while (cursor.Punct(","));
    if (!cursor.Match(later, &zones)) return false;
  }
  if (!cursor.Match(at_time_zone, &zones) || (with_drops && !cursor.Keyword("end"))) return false;
  return SameZone(cursor, zones, &zoned->zone);
}

// c.[col] [AS alias]: 0.8.0 names the captured columns as they are.
bool ChangeRowsText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head(
      "SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn, CONVERT(varchar(22), "
      "c.[__$seqval], 1) AS _seqval, c.[__$operation] AS _operation,");
  static const Phrase command_id("c.[__$command_id] AS _command_id,");
  static const Phrase commit_time("CAST(m.tran_end_time AS datetime2(3)) AS _commit_ts");
  static const Phrase shifted_time("CAST(DATEADD(minute,");
  static const Phrase shifted_time_tail(", m.tran_end_time) AS datetime2(3)) AS _commit_ts");
  static const Phrase zoned_time_tail("AS _commit_ts");
  static const Phrase next_column(", c.");
  static const Phrase from("FROM cdc.");
  static const Phrase join(
      "c JOIN cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn] WHERE c.[__$start_lsn] BETWEEN");
  static const Phrase order_with_command_id(
      "ORDER BY c.[__$start_lsn], c.[__$command_id], c.[__$seqval], c.[__$operation]");
  static const Phrase order("ORDER BY c.[__$start_lsn], c.[__$seqval], c.[__$operation]");
  ChangeRowsQuery query;
  query.reference_projection = true;
  if (!cursor.Match(head)) return false;
  query.include_command_id = cursor.Match(command_id);
  if (cursor.Match(shifted_time)) {
    const bool negative = cursor.Punct("-");
    if (!cursor.Integer(&query.commit_minutes_added) || !cursor.Match(shifted_time_tail)) return false;
    if (negative) query.commit_minutes_added = -query.commit_minutes_added;
  } else if (ChangeRowsQuery::ZonedCommitTimes zoned; ZonedCommitTimesText(cursor, &zoned)) {
    if (!cursor.Match(zoned_time_tail)) return false;
    query.zoned = std::move(zoned);
  } else if (!cursor.Match(commit_time)) {
    return false;
  }
  while (cursor.Match(next_column)) {
    std::string column;
    if (!cursor.Name(&column)) return false;
    query.columns.push_back(std::move(column));
  }
  if (!cursor.Match(from) || !cursor.Name(&query.change_table) || !cursor.Match(join) ||
      !LsnArgument(cursor, &query.from) || !cursor.Keyword("and") || !LsnArgument(cursor, &query.to) ||
      !cursor.Match(query.include_command_id ? order_with_command_id : order) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

bool NetworkWait(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase phrase(
      "SELECT wait_time_ms FROM sys.dm_exec_session_wait_stats WHERE session_id = @@SPID AND "
      "wait_type = 'ASYNC_NETWORK_IO'");
  if (!cursor.Match(phrase) || !cursor.End()) return false;
  *out = NetworkWaitQuery{};
  return true;
}

// SELECT CASE WHEN DATEDIFF(day, MIN(tran_end_time), MAX(tran_end_time)) < 7 AND ... END FROM
// cdc.lsn_time_mapping WHERE start_lsn BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?, 1)
bool RangeOffsetText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase probe(
      "SELECT CASE WHEN DATEDIFF(day, MIN(tran_end_time), MAX(tran_end_time)) < 7 AND "
      "DATEPART(TZOFFSET, DATEADD(hour, -3, MIN(tran_end_time)) AT TIME ZONE ?) = "
      "DATEPART(TZOFFSET, DATEADD(hour, 3, MAX(tran_end_time)) AT TIME ZONE ?) THEN "
      "DATEPART(TZOFFSET, DATEADD(hour, 3, MAX(tran_end_time)) AT TIME ZONE ?) END FROM "
      "cdc.lsn_time_mapping WHERE start_lsn BETWEEN");
  std::vector<SqlValue> zones;
  RangeOffsetQuery query;
  if (!cursor.Match(probe, &zones) || !SameZone(cursor, zones, &query.zone) || !LsnArgument(cursor, &query.from) ||
      !cursor.Keyword("and") || !LsnArgument(cursor, &query.to) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

// SELECT CONVERT(varchar(22), x.start_lsn, 1) AS l, CONVERT(varchar(23), x.t, 126) AS t FROM (...
// MIN(tran_end_time) of [?, ?] ...) r CROSS APPLY (... LAG(tran_end_time) ... up to ? ...) x
bool FallBackDropsText(TokenCursor& cursor, RecognizedStatement* out) {
  static const Phrase head(
      "SELECT CONVERT(varchar(22), x.start_lsn, 1) AS l, CONVERT(varchar(23), x.t, 126) AS t FROM (SELECT "
      "MIN(tran_end_time) AS t0 FROM cdc.lsn_time_mapping WHERE start_lsn BETWEEN");
  static const Phrase window(
      "HAVING MIN(tran_end_time) IS NOT NULL) r CROSS APPLY (SELECT d.start_lsn, d.t FROM (SELECT COALESCE((SELECT "
      "TOP (1) start_lsn FROM cdc.lsn_time_mapping WHERE tran_end_time <= DATEADD(hour, -3, r.t0) ORDER BY "
      "tran_end_time DESC), 0x00000000000000000000) AS lo) b CROSS APPLY (SELECT start_lsn, tran_end_time AS t, "
      "LAG(tran_end_time) OVER (ORDER BY start_lsn) AS prev FROM cdc.lsn_time_mapping WHERE start_lsn > b.lo AND "
      "start_lsn <=");
  static const Phrase drop(
      ") d WHERE d.t < DATEADD(minute, -1, d.prev) AND (DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT TIME ZONE ?) < "
      "DATEPART(TZOFFSET, d.t AT TIME ZONE ?) AND DATEPART(TZOFFSET, DATEADD(minute, DATEPART(TZOFFSET, d.t AT TIME "
      "ZONE ?) - DATEPART(TZOFFSET, DATEADD(hour, 3, d.t) AT TIME ZONE ?), d.t) AT TIME ZONE ?) = DATEPART(TZOFFSET, "
      "DATEADD(hour, 3, d.t) AT TIME ZONE ?))) x");
  FallBackDropsQuery query;
  std::vector<SqlValue> zones;
  if (!cursor.Match(head) || !LsnArgument(cursor, &query.from) || !cursor.Keyword("and") ||
      !LsnArgument(cursor, &query.to) || !cursor.Match(window) || !LsnArgument(cursor, &query.upto) ||
      !cursor.Match(drop, &zones) || !SameZone(cursor, zones, &query.zone) || !cursor.End()) {
    return false;
  }
  *out = std::move(query);
  return true;
}

constexpr Shape kReferenceShapes[] = {
    MaxLsnText, MinLsnText, LsnStepText, CommitTimeText, TimeToLsnText, NthCommitAfterText,
    SplitPointsText, TableColumns, KeyRange, KeyTiles, LastKeyRaw, KeyBound, KeyBuckets,
    ChangeRowsText, NetworkWait, RangeOffsetText, FallBackDropsText,
};

}  // namespace

std::span<const Shape> ReferenceShapes() { return kReferenceShapes; }

}  // namespace mssql_cdc::sim_server
