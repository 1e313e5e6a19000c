// DeltaTable::MissingFiles (table.h): the active files the store lost.
#include <map>
#include <set>

#include "delta/data_file_io.h"
#include "delta/log_files.h"
#include "delta/table.h"

namespace mssql_cdc::delta {

std::vector<std::string> DeltaTable::MissingFiles(std::optional<int> newest_commits) const {
  std::vector<std::string> missing;
  if (newest_commits) {
    std::set<std::string> checked;
    const std::int64_t oldest = std::max<std::int64_t>(0, state_.version - *newest_commits + 1);
    for (std::int64_t version = state_.version; version >= oldest; --version) {
      // A commit a checkpoint has replaced and a log cleanup removed: nothing older to look at.
      const auto actions = ReadCommit(*fs_, root_, version);
      if (!actions) break;
      for (const auto& action : *actions) {
        const auto* add = std::get_if<AddFile>(&action);
        if (add == nullptr || state_.files.count(add->path) == 0 || !checked.insert(add->path).second) continue;
        if (!fs_->Exists(JoinPath(root_, DataFileRelativePath(add->path)))) missing.push_back(add->path);
      }
    }
    return missing;
  }
  // Every active file, by the folder it is in: one listing each.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_folder;
  for (const auto& [path, add] : state_.files) {
    const std::string relative = DataFileRelativePath(path);
    const std::size_t slash = relative.rfind('/');
    const std::string folder = slash == std::string::npos ? "" : relative.substr(0, slash);
    const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
    by_folder[folder].emplace_back(name, path);
  }
  for (const auto& [folder, files] : by_folder) {
    std::set<std::string> present;
    for (const auto& entry : fs_->List(folder.empty() ? root_ : JoinPath(root_, folder))) {
      if (!entry.is_directory) present.insert(entry.name);
    }
    for (const auto& [name, path] : files) {
      if (present.count(name) == 0) missing.push_back(path);
    }
  }
  return missing;
}

}  // namespace mssql_cdc::delta
