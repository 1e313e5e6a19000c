// The storage of one checkpoint directory, local or in an object store (storage/store.h): the
// files of stream_checkpoint.h, generations.h, staged_files.h and checkpoint_lock.h are read
// and written only through it, each written whole so that a crash leaves the old file or the
// new one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/file_system.h"

namespace mssql_cdc {

class CheckpointDirectory {
 public:
  // Opens the store of `location` (a path or URI); throws ConfigError for one it cannot open.
  explicit CheckpointDirectory(std::string location);

  // The location as given, for messages.
  const std::string& location() const { return location_; }
  bool in_object_store() const { return in_object_store_; }

  // The path of `relative` ("offsets/3.json") in the store.
  std::string Path(const std::string& relative) const;
  // nullopt when the file does not exist.
  std::optional<std::string> Read(const std::string& relative) const;
  // Replaces the file whole.
  void Write(const std::string& relative, const std::string& contents);
  // Creates the file only if no file has its name (atomically, in every store); false when
  // one does, and then nothing was written.
  bool WriteIfAbsent(const std::string& relative, const std::string& contents);
  void Delete(const std::string& relative);
  // The names of the files in the subdirectory `relative`; empty when it does not exist.
  std::vector<std::string> List(const std::string& relative) const;

  // Whether the checkpoint exists: locally a directory at the path (ConfigError when something
  // else is there), in an object store any file under it.
  bool Exists() const;
  // Makes the directory (and its parents) where directories exist; nothing in an object store.
  void Create();

 private:
  std::string location_;
  std::shared_ptr<storage::FileSystem> fs_;
  std::string root_;
  bool in_object_store_;
};

}  // namespace mssql_cdc
