#include "engine/staged_files.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <map>
#include <random>
#include <sstream>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

constexpr char kDirectory[] = "staged";
constexpr char kSuffix[] = ".files";

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string AttemptId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(rng()));
  return text;
}

// The unit a list is of: "<unit>.<attempt>.files", or "<unit>.files" as lists were named
// before attempts were.
std::string UnitOf(const std::string& name) {
  std::string stem = name.substr(0, name.size() - std::strlen(kSuffix));
  const auto dot = stem.rfind('.');
  return dot == std::string::npos ? stem : stem.substr(0, dot);
}

}  // namespace

StagedFileList::StagedFileList(std::string checkpoint_directory, std::string name)
    : dir_(std::move(checkpoint_directory)),
      relative_(std::string(kDirectory) + "/" + name + "." + AttemptId() + kSuffix) {}

void StagedFileList::Record(const std::string& table, const std::string& relative_path) {
  std::lock_guard lock(mutex_);
  lines_ += table + " " + relative_path + "\n";
  dir_.Write(relative_, lines_);
}

std::function<void(const std::string&)> StagedFileList::For(const std::string& table) {
  return [this, table](const std::string& relative_path) { Record(table, relative_path); };
}

void StagedFileList::Clear() {
  std::lock_guard lock(mutex_);
  if (lines_.empty()) return;
  try {
    dir_.Delete(relative_);
  } catch (const Error& e) {
    spdlog::warn("checkpoint: could not remove {}: {}", dir_.Path(relative_), e.what());
  }
  lines_.clear();
}

void DeleteUncommittedStagedFiles(const std::string& checkpoint_directory,
                                  const DeleteUnnamedFiles& delete_unnamed) {
  DeleteSettledStagedFiles(
      checkpoint_directory, [](const std::string&) { return true; }, delete_unnamed);
}

int DeleteSettledStagedFiles(const std::string& checkpoint_directory,
                             const std::function<bool(const std::string& unit)>& settled,
                             const DeleteUnnamedFiles& delete_unnamed) {
  CheckpointDirectory dir(checkpoint_directory);
  int left = 0;
  for (const auto& name : dir.List(kDirectory)) {
    if (!EndsWith(name, kSuffix)) continue;
    if (!settled(UnitOf(name))) {
      ++left;
      continue;
    }
    const std::string relative = std::string(kDirectory) + "/" + name;
    const std::optional<std::string> text = dir.Read(relative);
    if (!text) continue;
    std::map<std::string, std::vector<std::string>> by_table;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      const auto space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string path = line.substr(space + 1);
      if (path.rfind("part-", 0) != 0 || path.find('/') != std::string::npos) continue;
      by_table[line.substr(0, space)].push_back(path);
    }
    for (const auto& [table, paths] : by_table) delete_unnamed(table, paths);
    dir.Delete(relative);
  }
  return left;
}

}  // namespace mssql_cdc
