// The object stores a process has opened, each once: the first use of a bucket (or container)
// runs the store's checks, and later uses share the filesystem they opened.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

class OpenedStores {
 public:
  // The filesystem opened under `key`, opening it with `open` when there is none. `open` runs
  // under the lock, so that two threads never check one bucket twice.
  std::shared_ptr<FileSystem> Get(const std::string& key,
                                  const std::function<std::shared_ptr<FileSystem>()>& open);
  // Forgets every filesystem.
  void Clear();

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<FileSystem>> by_key_;
};

}  // namespace mssql_cdc::storage
