#include "storage/file_system.h"

namespace mssql_cdc::storage {

std::vector<FileInfo> FileSystem::ListAfter(const std::string& directory,
                                            const std::string& after) {
  std::vector<FileInfo> entries = List(directory);
  std::erase_if(entries, [&](const FileInfo& entry) { return entry.name <= after; });
  return entries;
}

}  // namespace mssql_cdc::storage
