// The Spark SQL by which Spark answers reconcile's questions of the lake (reconcile/lake_side.h)
// for python/mssql_cdc/reconcile.py: the same tallies, rows and keys DeltaLakeSide reads
// natively, of silver and bronze pinned at the versions the run read first. `silver_sql` and
// `bronze_sql` are table references as Spark SQL takes them (a name, or delta.`path`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reconcile/key_grid.h"
#include "silver/key_units.h"

namespace mssql_cdc::catalog {

// Columns slice (bigint), rows (bigint), key_sum (decimal(38,0)): one row per non-empty slice.
std::string SliceTallySql(const std::string& silver_sql, std::int64_t version, const std::string& key, KeyUnit unit,
                          const KeyGrid& grid);
std::string CountRowsSql(const std::string& silver_sql, std::int64_t version);
std::string RowsBetweenSql(const std::string& silver_sql, std::int64_t version, const std::string& key, KeyUnit unit,
                           std::optional<std::int64_t> lo, std::optional<std::int64_t> hi);
std::string ChangedKeysSql(const std::string& bronze_sql, std::int64_t version,
                           const std::vector<std::string>& keys, const std::string& after_lsn);

// The facts rows of bronze `bronze_name` that are snapshot events (SnapshotEventsOf reads them).
std::string SnapshotEventsSql(const std::string& facts_sql, const std::string& bronze_name);
// The plans table's rows of the snapshot at `snapshot_lsn`, in either layout (PlanFromTable
// reads them).
std::string PlanRowsSql(const std::string& plans_sql, const std::string& snapshot_lsn);
// Columns chunk (int), rows (bigint), oldest_stamp (string): bronze's rows of snapshot
// `snapshot_lsn` per chunk.
std::string ChunkTalliesSql(const std::string& bronze_sql, std::int64_t version, const std::string& snapshot_lsn);

}  // namespace mssql_cdc::catalog
