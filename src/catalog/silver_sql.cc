#include "catalog/silver_sql.h"

#include <arrow/type.h>

#include "catalog/key_sql.h"
#include "core/ascii.h"
#include "core/time.h"
#include "silver/silver_schema.h"
#include "source/output_schema.h"

namespace mssql_cdc::catalog {
namespace {

std::string Literal(const std::optional<std::string>& text) {
  return text ? SqlStringLiteral(*text) : "CAST(NULL AS STRING)";
}

std::string TimestampLiteral(UtcMicros time) {
  return "CAST(" + SqlStringLiteral(FormatDateTime(time.value, 6)) + " AS TIMESTAMP_NTZ)";
}

std::string KeysMatch(const std::vector<std::string>& keys) {
  std::string on;
  for (const auto& key : keys) {
    if (!on.empty()) on += " AND ";
    on += "t." + QuoteIdentifier(key) + " <=> s." + QuoteIdentifier(key);
  }
  return on;
}

}  // namespace

namespace {

std::string ChunkList(const SilverApplyPlan& plan) {
  std::string list;
  for (int chunk : plan.wave_chunks) list += (list.empty() ? "" : ", ") + std::to_string(chunk);
  return list;
}

std::string VersionOf(const std::string& bronze_sql, std::int64_t version) {
  return bronze_sql + " VERSION AS OF " + std::to_string(version);
}

std::string BoundSql(const SilverApplyPlan& plan, const std::string& oldest_wave_stamp) {
  auto bound = SilverRowsFilter(plan, oldest_wave_stamp);
  if (!bound) return "";
  return "_start_lsn " + bound->first + " " + SqlStringLiteral(bound->second);
}

}  // namespace

std::string WaveStampSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan) {
  if (!plan.open_snapshot_lsn || plan.wave_chunks.empty()) return "";
  return "SELECT min(_start_lsn) FROM " + VersionOf(bronze_sql, version) + " WHERE _operation = 0 AND _snapshot = " +
         SqlStringLiteral(*plan.open_snapshot_lsn) + " AND _chunk IN (" + ChunkList(plan) + ")";
}

std::string PlanRowsSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan,
                        const std::string& oldest_wave_stamp) {
  std::string snapshot_rows;
  if (plan.snapshot_lsn) {
    snapshot_rows = " OR coalesce(_snapshot, _start_lsn) = " + SqlStringLiteral(*plan.snapshot_lsn);
  } else if (plan.open_snapshot_lsn && !plan.wave_chunks.empty()) {
    snapshot_rows = " OR (_snapshot = " + SqlStringLiteral(*plan.open_snapshot_lsn) + " AND _chunk IN (" +
                    ChunkList(plan) + "))";
  }
  std::string where = "(_operation <> 0" + snapshot_rows + ")";
  const std::string bound = BoundSql(plan, oldest_wave_stamp);
  if (!bound.empty()) where = bound + " AND " + where;
  return "SELECT * FROM " + VersionOf(bronze_sql, version) + " WHERE " + where;
}

std::string PlanInstancesSql(const std::string& bronze_sql, std::int64_t version, const SilverApplyPlan& plan,
                             const std::string& oldest_wave_stamp) {
  std::string sql = "SELECT DISTINCT _capture_instance FROM " + VersionOf(bronze_sql, version);
  const std::string bound = BoundSql(plan, oldest_wave_stamp);
  if (!bound.empty()) sql += " WHERE " + bound;
  return sql;
}

namespace {

std::string InRangeSql(const std::string& key, const WaveRange& range, KeyUnit unit) {
  std::string condition;
  if (range.lo) condition = key + " >= " + KeyLiteralSql(*range.lo, unit);
  if (range.hi) condition += (condition.empty() ? "" : " AND ") + key + " < " + KeyLiteralSql(*range.hi, unit);
  return condition.empty() ? "TRUE" : condition;
}

}  // namespace

std::string WithRangeDeletesSql(const std::string& plan_view, const std::string& silver_sql,
                                const arrow::Schema& bronze, const WaveRanges& ranges) {
  const std::string key = "t." + QuoteIdentifier(ranges.key);
  std::string stamp = "CASE", any;
  for (const auto& range : ranges.ranges) {
    const std::string inside = InRangeSql(key, range, ranges.unit);
    stamp += " WHEN " + inside + " THEN " + SqlStringLiteral(range.stamp);
    any += (any.empty() ? "(" : " OR (") + inside + ")";
  }
  stamp += " END";
  std::string columns;
  for (const auto& field : bronze.fields()) {
    std::string value = "NULL";
    if (EqualsIgnoringAsciiCase(field->name(), ranges.key)) value = QuoteIdentifier(ranges.key);
    else if (field->name() == kOperationColumn) value = "1";
    else if (field->name() == kStartLsnColumn) value = "_mssql_cdc_stamp";
    columns += (columns.empty() ? "" : ", ") + value + " AS " + QuoteIdentifier(field->name());
  }
  const std::string quoted_key = QuoteIdentifier(ranges.key);
  return "SELECT * FROM " + plan_view + " UNION ALL SELECT " + columns + " FROM (SELECT " + key + ", t._start_lsn, " +
         stamp + " AS _mssql_cdc_stamp FROM " + silver_sql + " AS t WHERE " + key + " IS NOT NULL AND (" + any +
         ")) AS d WHERE d._start_lsn < d._mssql_cdc_stamp AND NOT EXISTS (SELECT 1 FROM " + plan_view +
         " AS c WHERE c._operation = 0 AND c._chunk IS NOT NULL AND c._snapshot = " +
         SqlStringLiteral(ranges.snapshot_lsn) + " AND c." + quoted_key + " = d." + quoted_key + ")";
}

std::string LatestImagesSql(const std::string& rows_view, const arrow::Schema& bronze,
                            const std::vector<std::string>& keys) {
  std::string partition;
  for (const auto& key : keys) partition += (partition.empty() ? "" : ", ") + QuoteIdentifier(key);
  std::string order = "_start_lsn DESC";
  if (bronze.GetFieldIndex(std::string(kCommandIdColumn)) >= 0) order += ", _command_id DESC NULLS FIRST";
  order += ", _seqval DESC NULLS FIRST, _operation DESC";
  std::string columns;
  const auto silver = SilverSchema(bronze);
  for (const auto& field : silver->fields()) columns += QuoteIdentifier(field->name()) + ", ";
  return "SELECT " + columns + "_operation IN (1, 3) AS " + kDeletedColumn + " FROM (SELECT *, row_number() OVER " +
         "(PARTITION BY " + partition + " ORDER BY " + order + ") AS _mssql_cdc_rank FROM " + rows_view +
         ") WHERE _mssql_cdc_rank = 1";
}

std::string MergeImagesSql(const std::string& silver_sql, const std::string& images_view,
                           const arrow::Schema& silver, const std::vector<std::string>& keys, bool rebuild) {
  std::string set, names, values;
  for (const auto& field : silver.fields()) {
    const std::string column = QuoteIdentifier(field->name());
    set += (set.empty() ? "" : ", ") + ("t." + column + " = s." + column);
    names += (names.empty() ? "" : ", ") + column;
    values += (values.empty() ? "" : ", ") + ("s." + column);
  }
  const std::string deleted = std::string("s.") + kDeletedColumn;
  const std::string newer = rebuild ? "" : " AND t._start_lsn < s._start_lsn";
  std::string sql = "MERGE INTO " + silver_sql + " AS t USING " + images_view + " AS s ON " + KeysMatch(keys) +
                    " WHEN MATCHED AND " + deleted + newer + " THEN DELETE" +
                    " WHEN MATCHED AND NOT " + deleted + newer + " THEN UPDATE SET " + set +
                    " WHEN NOT MATCHED AND NOT " + deleted + " THEN INSERT (" + names + ") VALUES (" + values + ")";
  if (rebuild) sql += " WHEN NOT MATCHED BY SOURCE THEN DELETE";
  return sql;
}

std::string SilverPositionSql(const TableRef& control, const std::string& silver_name,
                              const std::optional<SilverPosition>& expected, const SilverPosition& position,
                              const std::optional<Verdict>& verdict) {
  const SilverPosition was = expected.value_or(SilverPosition{});
  auto wave = [](const std::optional<std::int32_t>& w) {
    return w ? "CAST(" + std::to_string(*w) + " AS INT)" : std::string("CAST(NULL AS INT)");
  };
  const std::string unchanged = "t.applied_lsn <=> " + Literal(was.applied_lsn) +
                                " AND t.snapshot_lsn <=> " + Literal(was.snapshot_lsn) +
                                " AND t.open_snapshot_lsn <=> " + Literal(was.open_snapshot_lsn) +
                                " AND t.snapshot_wave <=> " + wave(was.snapshot_wave);
  std::string source = "SELECT " + SqlStringLiteral(silver_name) + " AS table_name, " +
                       Literal(position.applied_lsn) + " AS applied_lsn, " + Literal(position.snapshot_lsn) +
                       " AS snapshot_lsn, " + Literal(position.open_snapshot_lsn) + " AS open_snapshot_lsn, " +
                       wave(position.snapshot_wave) + " AS snapshot_wave";
  if (verdict) {
    source += ", " + TimestampLiteral(verdict->finalized_until) + " AS finalized_until, " +
              SqlStringLiteral(verdict->end_lsn) + " AS end_lsn, " + TimestampLiteral(verdict->end_commit_ts) +
              " AS end_commit_ts, " + TimestampLiteral(NowUtc()) + " AS updated_at";
  } else {
    source += ", CAST(NULL AS TIMESTAMP_NTZ) AS finalized_until, CAST(NULL AS STRING) AS end_lsn, "
              "CAST(NULL AS TIMESTAMP_NTZ) AS end_commit_ts, CAST(NULL AS TIMESTAMP_NTZ) AS updated_at";
  }
  const std::string moves = "(s.finalized_until IS NOT NULL AND (t.finalized_until IS NULL OR "
                            "t.finalized_until < s.finalized_until))";
  auto verdict_column = [&](const char* column) {
    return std::string("t.") + column + " = CASE WHEN " + moves + " THEN s." + column + " ELSE t." + column + " END";
  };
  std::string sql = "MERGE INTO " + control.QuotedName() + " AS t USING (" + source +
                    ") AS s ON t.table_name = s.table_name WHEN MATCHED AND " + unchanged +
                    " THEN UPDATE SET " + verdict_column("finalized_until") + ", " + verdict_column("end_lsn") +
                    ", " + verdict_column("end_commit_ts") + ", " + verdict_column("updated_at") +
                    ", t.applied_lsn = s.applied_lsn, t.snapshot_lsn = s.snapshot_lsn,"
                    " t.open_snapshot_lsn = s.open_snapshot_lsn, t.snapshot_wave = s.snapshot_wave";
  if (!expected) {
    sql += " WHEN NOT MATCHED THEN INSERT (table_name, finalized_until, end_lsn, end_commit_ts, updated_at,"
           " applied_lsn, snapshot_lsn, open_snapshot_lsn, snapshot_wave) VALUES (s.table_name,"
           " s.finalized_until, s.end_lsn, s.end_commit_ts, s.updated_at, s.applied_lsn, s.snapshot_lsn,"
           " s.open_snapshot_lsn, s.snapshot_wave)";
  }
  return sql;
}

}  // namespace mssql_cdc::catalog
