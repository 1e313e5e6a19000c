// A Delta Lake table on a filesystem, written and read by this engine without Spark.
//
// DeltaTable promises what a Delta reader (Spark, delta-rs) relies on:
// - A commit is one file _delta_log/<version>.json, created only if absent and never
//   overwritten; the data files it names are written before it. A crash leaves either the
//   whole commit or none of it.
// - Exactly once: an append may carry a txn (app_id, version). When the table already holds
//   that app_id at that version or later, the append writes nothing and says which table
//   version holds it.
// - Optimistic concurrency: a writer that loses the race for a version re-reads the log and
//   retries when its commit is a blind append that conflicts with nothing; otherwise it fails
//   with an error naming the conflict.
// - A checkpoint (classic, one Parquet file) every 10 commits, and _last_checkpoint.
//
// A DeltaTable object is used from one thread at a time; several processes may write one
// table at once.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/snapshot.h"

namespace mssql_cdc::delta {

class FileSystem;

struct CreateOptions {
  // Field metadata key "comment" is the column comment; nullability is kept.
  std::shared_ptr<arrow::Schema> schema;
  StringMap properties;  // table properties (delta.* and ours, e.g. mssql_cdc.schema_version)
  std::optional<std::string> name;
  std::optional<std::string> description;  // the table comment
};

struct WriteOptions {
  std::string compression = "snappy";              // "snappy" or "zstd"
  std::int64_t target_file_bytes = 128LL << 20;    // roll over to a new file past this
  std::int64_t row_group_rows = 1'000'000;
  // Leaf columns that get min/max/nullCount stats (delta.dataSkippingNumIndexedCols);
  // negative: all of them.
  int stats_columns = 32;
};

struct AppendOptions {
  std::optional<Txn> txn;                    // exactly once by (app_id, version)
  std::optional<std::string> user_metadata;  // JSON text for commitInfo.userMetadata
  bool merge_schema = true;                  // new columns are added to the table
  std::string operation = "WRITE";
  WriteOptions write;
};

struct CommitResult {
  std::int64_t version = -1;  // the table version that holds the data
  bool written = false;       // false: nothing written (txn already held, or no rows)
  std::int64_t files = 0;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  int attempts = 0;           // commits tried (1 without contention)
};

// A row filter for reads: column <op> literal (literal given as text, compared in the
// column's type). Conjunction of terms.
struct FilterTerm {
  std::string column;
  std::string op;  // "=", "!=", "<", "<=", ">", ">="
  std::string value;
};

class DeltaTable {
 public:
  // `uri` is a path or a file:// URI.
  static bool Exists(const std::string& uri);
  // Creates the table; a no-op when it exists with the same schema; SchemaChangedError when it
  // exists with another.
  static DeltaTable Create(const std::string& uri, const CreateOptions& options);
  // Throws SourceError naming the path when it is not a Delta table or its log cannot be read.
  static DeltaTable Open(const std::string& uri);

  const std::string& uri() const;
  // The snapshot this object last read or wrote.
  const Snapshot& snapshot() const;
  // Reads the log again.
  const Snapshot& Refresh();
  // Reads the commits other writers made since the snapshot into it (cheap: one lookup when
  // there are none).
  const Snapshot& CatchUp();

  // The commit that gave `app_id` its current txn version in the snapshot: its table version,
  // the txn version and its commitInfo.userMetadata. nullopt when the snapshot holds no txn
  // for the app id or the commit is no longer on disk.
  struct TxnCommit {
    std::int64_t table_version = -1;
    std::int64_t txn_version = -1;
    std::optional<std::string> user_metadata;
  };
  std::optional<TxnCommit> CommitHoldingTxn(const std::string& app_id) const;

  CommitResult Append(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                      const AppendOptions& options = {});

  // Copy-on-write upsert for small tables: rows whose `key_column` equals a key in `rows`
  // are replaced by those rows, others kept; one commit removes the old files and adds the
  // new one. On a lost race the merge is recomputed on the new snapshot.
  CommitResult UpsertByKey(const std::string& key_column,
                           const std::shared_ptr<arrow::Table>& rows,
                           const AppendOptions& options = {});
  // The same, written only if `should_write` approves: it is called on every attempt's
  // snapshot with the table's current rows whose keys are upserted (in the table's schema;
  // no rows when none exist). False commits nothing and returns written=false, so a caller can
  // make an upsert conditional on state a concurrent writer may change (compare and set).
  using UpsertCondition =
      std::function<bool(const std::shared_ptr<arrow::Table>& current_rows_with_those_keys)>;
  CommitResult UpsertByKey(const std::string& key_column,
                           const std::shared_ptr<arrow::Table>& rows,
                           const AppendOptions& options, const UpsertCondition& should_write);

  // The table's rows (or those matching every filter term), in the table's current schema:
  // columns a file lacks read as NULL.
  std::shared_ptr<arrow::Table> Read(const std::vector<FilterTerm>& filter = {}) const;

 private:
  DeltaTable(std::shared_ptr<FileSystem> fs, std::string uri, Snapshot snapshot);
  void CheckpointIfDue();
  // After `actions` were written as commit `version` on try `attempt`: the snapshot takes
  // them in, a checkpoint follows when due, and the result counts the `adds` and their `rows`.
  CommitResult Committed(const std::vector<Action>& actions, std::int64_t version,
                         const std::vector<AddFile>& adds, std::int64_t rows, int attempt);
  std::shared_ptr<FileSystem> fs_;
  std::string uri_;
  std::string root_;  // the resolved local path of uri_
  Snapshot snapshot_;
};

}  // namespace mssql_cdc::delta
