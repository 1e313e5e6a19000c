// What a caller tells a Delta table when it creates, writes or reads it, and what a commit
// reports back (table.h): shared by the table and the writers and readers of its data files,
// which need these and not the table itself.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "delta/actions.h"

namespace mssql_cdc::delta {

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
  // A DataFileStream writes a row group once it holds this many Arrow bytes: what bounds its
  // memory (WriteDataFiles, given rows already in memory, sizes row groups by file instead).
  std::int64_t row_group_bytes = 64LL << 20;
  // Leaf columns that get min/max/nullCount stats (delta.dataSkippingNumIndexedCols);
  // negative: all of them.
  int stats_columns = 32;
  // Told each data file's path (relative to the table root) before the file is created, so
  // that a caller can find the files a crash leaves behind before their commit.
  std::function<void(const std::string& relative_path)> on_file;
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
  std::int64_t files_removed = 0;  // by a rewrite's commit
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

}  // namespace mssql_cdc::delta
