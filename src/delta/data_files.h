// The data files of a Delta table: Parquet files under the table root, written from Arrow
// record batches and read back into one Arrow table.
//
// WriteDataFiles promises files that Spark (delta-spark) and delta-rs read as the table's
// columns: INT64 TIMESTAMP(MICROS) timestamps (adjusted to UTC when the Arrow type has a time
// zone, timestamp_ntz otherwise), decimals as INT32/INT64/FIXED_LEN_BYTE_ARRAY by precision as
// Spark writes them, no int96. Each file's AddFile carries the per-file statistics Spark
// writes (file_stats.h). Files are written before any commit names them, so a failed write
// leaves only unreferenced files, which it tries to delete.
//
// ReadDataFiles reads such files (or Spark's) in the table's schema and applies a conjunctive
// row filter; it opens no file whose statistics prove that no row can match.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_options.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

// Writes `batches` (already aligned to `table_schema`: same column names, order and types) as
// Parquet files under table_root, rolling over to a new file once a file reaches
// options.target_file_bytes; row groups hold at most options.row_group_rows rows. Returns one
// AddFile per file, in the order of the rows: path relative to the root
// ("part-00000-<uuid>-c000.snappy.parquet" or ".zstd.parquet"), size and modificationTime from
// the filesystem, dataChange=true, stats. No rows: no files. Input spanning several target
// files is written on several threads, so `fs` must take concurrent calls. Throws ConfigError for an unknown compression, InternalError for batches
// that do not match table_schema, SourceError when the filesystem fails.
std::vector<AddFile> WriteDataFiles(storage::FileSystem& fs, const std::string& table_root,
                                    const std::shared_ptr<arrow::Schema>& table_schema,
                                    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                    const WriteOptions& options);

// Reads `files` into one table in `table_schema`: a column a file lacks reads as NULL, a
// narrower stored type (int32 for int64, another time zone, ...) is cast to the table's.
// Keeps the rows matching every filter term (a NULL never matches). Files whose stats prove
// that no row can match are not opened. Throws ConfigError for a filter naming an unknown
// column or operator, or a literal that does not parse in the column's type; SourceError,
// naming the file, when a file is missing or not Parquet.
std::shared_ptr<arrow::Table> ReadDataFiles(storage::FileSystem& fs, const std::string& table_root,
                                            const std::vector<AddFile>& files,
                                            const std::shared_ptr<arrow::Schema>& table_schema,
                                            const std::vector<FilterTerm>& filter);

}  // namespace mssql_cdc::delta
