// The one seam between Delta tables (and checkpoints) and storage. Every byte the delta
// component reads or writes goes through a FileSystem: the local one, or an object store's
// (storage/store.h opens the one a URI names). Paths are '/'-separated: absolute for the local
// filesystem, bucket (or container) first for an object store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/io/type_fwd.h>

namespace mssql_cdc::storage {

struct FileInfo {
  std::string name;  // the entry's name within its directory
  std::int64_t size = 0;
  std::int64_t modification_time_ms = 0;
  bool is_directory = false;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual bool Exists(const std::string& path) = 0;
  // nullopt when the file does not exist; throws SourceError on other failures.
  virtual std::optional<std::string> ReadFile(const std::string& path) = 0;
  // Entries of a directory, sorted by name; empty when it does not exist.
  virtual std::vector<FileInfo> List(const std::string& directory) = 0;
  // The entries of List(directory) whose names sort after `after`, in order. A store that can
  // start a listing there (S3's start-after) does, so a Delta log's replay from its checkpoint
  // does not pay for every version the table ever had.
  virtual std::vector<FileInfo> ListAfter(const std::string& directory, const std::string& after);
  virtual void CreateDirectories(const std::string& path) = 0;
  // Writes `contents` to `path` atomically and only if `path` does not exist: returns false,
  // writing nothing, when it exists. Readers never see a partial file.
  virtual bool WriteIfAbsent(const std::string& path, const std::string& contents) = 0;
  // Writes (replacing) atomically: readers see the old or the new contents.
  virtual void WriteAtomic(const std::string& path, const std::string& contents) = 0;
  virtual void Delete(const std::string& path) = 0;
  // Size and modification time of a file; throws SourceError when missing.
  virtual FileInfo Stat(const std::string& path) = 0;
  // Streams for data files (Parquet), written in place: a data file becomes visible to
  // readers only when a commit names it, so it needs no atomic rename.
  virtual std::shared_ptr<arrow::io::OutputStream> OpenOutputStream(const std::string& path) = 0;
  virtual std::shared_ptr<arrow::io::RandomAccessFile> OpenInputFile(const std::string& path) = 0;
};

}  // namespace mssql_cdc::storage
