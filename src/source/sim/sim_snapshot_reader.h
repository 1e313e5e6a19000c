// Reads the current rows of a sim database's source table in key order, over a key range, as
// operation-0 record batches of the output schema. SimSource resolves the table, columns and
// keys; this only reads, under one SQLite read snapshot of its own connection.
#pragma once

#include <arrow/record_batch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lsn.h"
#include "core/time.h"
#include "source/source.h"

namespace mssql_cdc::sim {
class SqliteDb;
}

namespace mssql_cdc {

struct SimKeyColumn {
  std::string name;  // as the source table spells it
  SqlType type;
};

// A source table and the key it is ordered and sought by; an empty key for a keyless table.
struct SimKeyTable {
  std::string table;  // storage name of the source table
  std::vector<SimKeyColumn> key;
};

struct SimSnapshotQuery {
  std::string path;              // the sim database file
  std::string capture_instance;  // stamped as _capture_instance
  std::string table;             // storage name of the source table
  std::vector<CapturedColumn> columns;  // output columns, in order
  // Per output column, its current name in the table; nullopt for a dropped column.
  std::vector<std::optional<std::string>> table_columns;
  std::vector<SimKeyColumn> key;  // order and range key; empty: keyless, read whole
  nlohmann::json lo;  // inclusive; null: open
  nlohmann::json hi;  // exclusive; null: open
  Lsn snapshot_lsn;
  UtcMicros snapshot_commit_ts;
  std::int64_t batch_rows = 10'000;
  std::int64_t batch_bytes = kDefaultBatchDataBytes;
};

// Throws ConfigError when a bound does not fit the key (a list for a one-column key, a scalar
// or a list of the wrong length for a composite one, a null or nested part), or batch_rows < 1.
std::unique_ptr<arrow::RecordBatchReader> MakeSimSnapshotReader(const SimSnapshotQuery& query);

// Source::KeyAt, KeyLast and RowEstimate over `db` (the sim file, read by the caller's
// connection). A keyless table throws ConfigError; bounds are checked as MakeSimSnapshotReader
// checks them. The row estimate of the simulator is the exact count.
std::optional<nlohmann::json> SimKeyAt(sim::SqliteDb& db, const SimKeyTable& table,
                                       const nlohmann::json& from, std::int64_t offset);
std::optional<nlohmann::json> SimLastKey(sim::SqliteDb& db, const SimKeyTable& table);
std::int64_t SimRowCount(sim::SqliteDb& db, const std::string& table);
// Source::CountKeySlices over `db`.
std::vector<SliceCount> SimCountKeySlices(sim::SqliteDb& db, const SimKeyTable& table,
                                          std::int64_t start, std::int64_t width,
                                          std::int64_t slices);

}  // namespace mssql_cdc
