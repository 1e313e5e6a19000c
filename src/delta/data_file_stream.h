// Rows written into Parquet data files as they arrive, in bounded memory.
//
// A DataFileStream holds the rows it is given until they reach options.row_group_bytes (Arrow
// bytes) or options.row_group_rows, then writes them as one row group and lets go of them; a
// file's last row group is sized, from the Parquet bytes per Arrow byte seen so far, to end it
// near options.target_file_bytes, and the next rows go to a new file.
// So it holds at most one row group's rows plus the batch being added, whatever the number of
// rows it is given. Finish returns one AddFile per file, in row order; nothing is committed
// here (DeltaTable::CommitStaged names the files in one commit).
//
// The files are the stream's until Finish hands them over: a stream destroyed without
// Finish (a failure) deletes the files it created. options.on_file is told each file's path
// before the file is created.
//
// A DataFileStream is used by one thread; several may write one table at once.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_options.h"
#include "storage/file_system.h"

namespace parquet {
class WriterProperties;
class ArrowWriterProperties;
}  // namespace parquet

namespace mssql_cdc::delta {

class ParquetFileWriter;

class DataFileStream {
 public:
  // `schema` is what every batch must have (same names, order, types); `part` numbers the
  // stream's files (part-<part>-...), so that the files of several streams sort in their order.
  DataFileStream(std::shared_ptr<storage::FileSystem> fs, std::string table_root,
                 std::shared_ptr<arrow::Schema> schema, WriteOptions options, std::size_t part);
  ~DataFileStream();
  DataFileStream(const DataFileStream&) = delete;
  DataFileStream& operator=(const DataFileStream&) = delete;

  // Adds rows, aligned to the schema (AlignBatchToSchema: by name, NULL for a missing column,
  // cast up); writes a row group when enough are held. SourceError when the filesystem fails.
  void Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Writes what is held, closes the last file and hands the files over.
  std::vector<AddFile> Finish();
  // Deletes every file the stream created, also after Finish: for a caller whose commit
  // will not happen (another part of the same append failed).
  void Discard();

  std::int64_t rows() const { return rows_; }
  // Arrow bytes held, not yet written.
  std::int64_t buffered_bytes() const { return buffered_bytes_; }

 private:
  void FlushRowGroup();
  void CloseFile();
  void DeleteCreated();
  // Arrow bytes after which the held rows are written as a row group.
  std::int64_t RowGroupBytes() const;

  std::shared_ptr<storage::FileSystem> fs_;
  std::string table_root_;
  std::shared_ptr<arrow::Schema> schema_;
  WriteOptions options_;
  std::size_t part_;
  std::shared_ptr<parquet::WriterProperties> properties_;
  std::shared_ptr<parquet::ArrowWriterProperties> arrow_properties_;

  std::vector<std::shared_ptr<arrow::RecordBatch>> buffered_;
  std::int64_t buffered_rows_ = 0;
  std::int64_t buffered_bytes_ = 0;
  std::unique_ptr<ParquetFileWriter> file_;
  std::int64_t file_bytes_ = 0;             // of the open file
  std::int64_t written_arrow_bytes_ = 0;    // over every row group written
  std::int64_t written_parquet_bytes_ = 0;
  std::vector<std::string> created_;  // full paths
  std::vector<AddFile> finished_;
  std::int64_t rows_ = 0;
  bool handed_over_ = false;
};

}  // namespace mssql_cdc::delta
