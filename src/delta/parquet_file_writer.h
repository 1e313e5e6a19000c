// One Parquet data file written a row group at a time, with the Delta stats of what it holds
// (internal to the delta component; data_files.h and data_file_stream.h build on it).
//
// The file is written in place: it becomes part of a table only when a commit names it, so a
// writer that fails leaves an unreferenced file, which its owner deletes. The stats are folded
// row group by row group, so the writer keeps none of the rows once a row group is written.
#pragma once

#include <arrow/type_fwd.h>
#include <parquet/properties.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/file_stats.h"
#include "delta/table_options.h"
#include "storage/file_system.h"

namespace parquet::arrow {
class FileWriter;
}

namespace mssql_cdc::delta {

// The Parquet properties that make Spark and delta-rs read our files as Spark's own: micros
// timestamps (never int96), decimals as INT32/INT64 where the precision allows, no Arrow schema
// blob. ConfigError for an unknown compression.
std::shared_ptr<parquet::WriterProperties> DataFileWriterProperties(const WriteOptions& options);
std::shared_ptr<parquet::ArrowWriterProperties> DataFileArrowProperties();

// InternalError unless `batch` has exactly the columns (names, order, types) of `schema`.
void CheckBatchSchema(const arrow::Schema& schema, const arrow::RecordBatch& batch);

// Named as Spark names a task's files, part-<part>-<uuid>-c<file of the part>.<codec>.parquet,
// so that names sort in row order whichever thread wrote them.
std::string DataFileName(std::size_t part, int file_of_part, const std::string& compression);

// The file holds the columns of `schema` under their physical names (column_mapping.h), and
// its stats are keyed by them, as the protocol asks of a table with column mapping.
class ParquetFileWriter {
 public:
  ParquetFileWriter(storage::FileSystem& fs, std::string full_path, std::string relative_path,
                    const std::shared_ptr<arrow::Schema>& schema,
                    const std::shared_ptr<parquet::WriterProperties>& properties,
                    const std::shared_ptr<parquet::ArrowWriterProperties>& arrow_properties,
                    int stats_columns);
  ~ParquetFileWriter();  // a file not closed is left for its owner to delete

  // Writes `slices` (consecutive rows of the schema) as one row group; returns the bytes in
  // the file so far.
  std::int64_t WriteRowGroup(const std::vector<std::shared_ptr<arrow::RecordBatch>>& slices);
  std::int64_t rows() const { return rows_; }
  const std::string& full_path() const { return full_path_; }

  // Finishes the file; its AddFile has the path relative to the table root, size and
  // modificationTime from the filesystem, dataChange=true and the stats.
  AddFile Close(storage::FileSystem& fs);

 private:
  std::string full_path_;
  std::string relative_path_;
  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::io::OutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  FileStatsAccumulator stats_;
  std::int64_t rows_ = 0;
  bool closed_ = false;
};

}  // namespace mssql_cdc::delta
