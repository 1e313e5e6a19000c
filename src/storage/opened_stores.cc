#include "storage/opened_stores.h"

namespace mssql_cdc::storage {

std::shared_ptr<FileSystem> OpenedStores::Get(
    const std::string& key, const std::function<std::shared_ptr<FileSystem>()>& open) {
  std::lock_guard lock(mutex_);
  if (auto found = by_key_.find(key); found != by_key_.end()) return found->second;
  auto opened = open();
  by_key_.emplace(key, opened);
  return opened;
}

void OpenedStores::Clear() {
  std::lock_guard lock(mutex_);
  by_key_.clear();
}

}  // namespace mssql_cdc::storage
