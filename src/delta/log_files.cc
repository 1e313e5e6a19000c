#include "delta/log_files.h"

#include <cstdio>

#include "core/errors.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {
namespace {

constexpr std::size_t kVersionDigits = 20;

// The version of "<20 digits><suffix>", when the name is exactly that.
std::optional<std::int64_t> VersionWithSuffix(const std::string& name, std::string_view suffix) {
  if (name.size() != kVersionDigits + suffix.size()) return std::nullopt;
  if (name.compare(kVersionDigits, std::string::npos, suffix) != 0) return std::nullopt;
  std::int64_t version = 0;
  for (std::size_t i = 0; i < kVersionDigits; ++i) {
    char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    version = version * 10 + (c - '0');
  }
  return version;
}

}  // namespace

std::string VersionFilePrefix(std::int64_t version) {
  char text[32];
  std::snprintf(text, sizeof text, "%020lld", static_cast<long long>(version));
  return text;
}

std::string LogDirectory(const std::string& table_root) { return table_root + "/_delta_log"; }

std::string CommitPath(const std::string& table_root, std::int64_t version) {
  return LogDirectory(table_root) + "/" + VersionFilePrefix(version) + ".json";
}

std::string CheckpointPath(const std::string& table_root, std::int64_t version) {
  return LogDirectory(table_root) + "/" + VersionFilePrefix(version) + ".checkpoint.parquet";
}

std::string LastCheckpointPath(const std::string& table_root) {
  return LogDirectory(table_root) + "/_last_checkpoint";
}

std::optional<std::int64_t> CommitVersionOf(const std::string& file_name) {
  return VersionWithSuffix(file_name, ".json");
}

std::optional<std::int64_t> CheckpointVersionOf(const std::string& file_name) {
  return VersionWithSuffix(file_name, ".checkpoint.parquet");
}

std::string EncodeCommit(const std::vector<Action>& actions) {
  std::string text;
  for (const auto& action : actions) {
    text += ToJsonLine(action);
    text += '\n';
  }
  return text;
}

std::optional<std::vector<Action>> ReadCommit(storage::FileSystem& fs, const std::string& table_root,
                                              std::int64_t version) {
  std::string path = CommitPath(table_root, version);
  auto contents = fs.ReadFile(path);
  if (!contents) return std::nullopt;
  std::vector<Action> actions;
  std::size_t start = 0;
  int line_number = 0;
  while (start < contents->size()) {
    std::size_t end = contents->find('\n', start);
    if (end == std::string::npos) end = contents->size();
    ++line_number;
    std::string_view line(contents->data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      auto action = ParseJsonLine(line, path + " line " + std::to_string(line_number));
      if (action) actions.push_back(std::move(*action));
    }
    start = end + 1;
  }
  if (line_number == 0) throw SourceError(path + ": the commit file is empty");
  return actions;
}

void ApplyActions(TableState& snapshot, const std::vector<Action>& actions, std::int64_t version) {
  for (const auto& action : actions) {
    if (const auto* p = std::get_if<Protocol>(&action)) {
      snapshot.protocol = *p;
    } else if (const auto* m = std::get_if<Metadata>(&action)) {
      snapshot.metadata = *m;
    } else if (const auto* add = std::get_if<AddFile>(&action)) {
      snapshot.tombstones.erase(add->path);
      snapshot.files[add->path] = *add;
    } else if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      snapshot.files.erase(remove->path);
      snapshot.tombstones[remove->path] = *remove;
    } else if (const auto* txn = std::get_if<Txn>(&action)) {
      snapshot.app_versions[txn->app_id] = txn->version;
    }
  }
  snapshot.version = version;
}

}  // namespace mssql_cdc::delta
