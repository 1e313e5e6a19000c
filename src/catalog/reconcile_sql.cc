#include "catalog/reconcile_sql.h"

#include "catalog/key_sql.h"
#include "core/table_ref.h"

namespace mssql_cdc::catalog {
namespace {

std::string At(const std::string& table_sql, std::int64_t version) {
  return table_sql + " VERSION AS OF " + std::to_string(version);
}

}  // namespace

std::string SliceTallySql(const std::string& silver_sql, std::int64_t version, const std::string& key, KeyUnit unit,
                          const KeyGrid& grid) {
  // A date as its day number since 1970-01-01, as the source counts it.
  const std::string value = unit == KeyUnit::kDay ? "unix_date(" + QuoteIdentifier(key) + ")" : QuoteIdentifier(key);
  const std::string k = "CAST(" + value + " AS DECIMAL(38,0))";
  // As SliceOf: floor((k - start) / width), clamped into the grid.
  const std::string slice = "LEAST(GREATEST(CAST(FLOOR((" + k + " - " + std::to_string(grid.start) + ") / " +
                            std::to_string(grid.width) + ") AS BIGINT), 0), " + std::to_string(grid.slices - 1) + ")";
  return "SELECT " + slice + " AS slice, count(*) AS rows, CAST(sum(" + k + ") AS DECIMAL(38,0)) AS key_sum FROM " +
         At(silver_sql, version) + " WHERE " + QuoteIdentifier(key) + " IS NOT NULL GROUP BY 1";
}

std::string CountRowsSql(const std::string& silver_sql, std::int64_t version) {
  return "SELECT count(*) FROM " + At(silver_sql, version);
}

std::string RowsBetweenSql(const std::string& silver_sql, std::int64_t version, const std::string& key, KeyUnit unit,
                           std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
  std::string sql = "SELECT * FROM " + At(silver_sql, version) + " WHERE TRUE";
  if (lo) sql += " AND " + QuoteIdentifier(key) + " >= " + KeyLiteralSql(*lo, unit);
  if (hi) sql += " AND " + QuoteIdentifier(key) + " < " + KeyLiteralSql(*hi, unit);
  return sql;
}

std::string ChangedKeysSql(const std::string& bronze_sql, std::int64_t version,
                           const std::vector<std::string>& keys, const std::string& after_lsn) {
  std::string columns;
  for (const auto& key : keys) columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(key);
  return "SELECT DISTINCT " + columns + " FROM " + At(bronze_sql, version) + " WHERE _start_lsn > " +
         SqlStringLiteral(after_lsn) + " AND _operation <> 0";
}

std::string SnapshotEventsSql(const std::string& facts_sql, const std::string& bronze_name) {
  return "SELECT * FROM " + facts_sql + " WHERE target = " + SqlStringLiteral(bronze_name) + " AND event IS NOT NULL";
}

std::string PlanRowsSql(const std::string& plans_sql, const std::string& snapshot_lsn) {
  return "SELECT * FROM " + plans_sql + " WHERE snapshot = " + SqlStringLiteral(snapshot_lsn);
}

std::string ChunkTalliesSql(const std::string& bronze_sql, std::int64_t version, const std::string& snapshot_lsn) {
  return "SELECT _chunk AS chunk, count(*) AS rows, min(_start_lsn) AS oldest_stamp FROM " + At(bronze_sql, version) +
         " WHERE _operation = 0 AND _snapshot = " + SqlStringLiteral(snapshot_lsn) +
         " AND _chunk IS NOT NULL GROUP BY _chunk";
}

}  // namespace mssql_cdc::catalog
