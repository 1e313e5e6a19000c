// Sorted runs of rows held on local disk while a bigger-than-memory job merges them (the silver
// rebuild). A SpillDirectory is a fresh directory of its own under the spill directory,
// deleted with everything in it when the object goes; a run is an Arrow IPC file of
// LZ4-compressed record batches, written once and read back a batch at a time, as often as
// needed, so that only one batch of each run is held while they are merged.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>

namespace arrow::ipc {
class RecordBatchFileReader;
class RecordBatchWriter;
}  // namespace arrow::ipc

namespace mssql_cdc {

class SpillDirectory {
 public:
  // Creates mssql-cdc-spill-XXXXXX under `parent` (empty: $TMPDIR, else /tmp). ConfigError
  // naming the parent when it cannot be created there.
  explicit SpillDirectory(const std::string& parent);
  ~SpillDirectory();
  SpillDirectory(const SpillDirectory&) = delete;
  SpillDirectory& operator=(const SpillDirectory&) = delete;

  const std::string& path() const { return path_; }
  // A new file name in the directory, run-<n>.arrows.
  std::string NextRunPath();

 private:
  std::string path_;
  int runs_ = 0;
};

// Writes one run; Close makes it readable. A write that fails (a full disk) is a SourceError
// naming the file.
class RunWriter {
 public:
  RunWriter(std::string path, std::shared_ptr<arrow::Schema> schema);
  ~RunWriter();
  void Write(const arrow::RecordBatch& batch);
  // The file's size in bytes.
  std::int64_t Close();

 private:
  std::string path_;
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer_;
  bool closed_ = false;
};

// Reads a run's batches in the order they were written.
class RunReader {
 public:
  explicit RunReader(const std::string& path);
  ~RunReader();
  // The next batch; null after the last.
  std::shared_ptr<arrow::RecordBatch> Next();

 private:
  std::string path_;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader_;
  int next_ = 0;
};

}  // namespace mssql_cdc
