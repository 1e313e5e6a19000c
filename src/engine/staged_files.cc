#include "engine/staged_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

namespace fs = std::filesystem;

constexpr char kDirectory[] = "staged";
constexpr char kSuffix[] = ".files";

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

StagedFileList::StagedFileList(std::string checkpoint_directory, std::string name)
    : directory_((fs::path(checkpoint_directory) / kDirectory).string()),
      path_((fs::path(directory_) / (name + kSuffix)).string()) {}

void StagedFileList::Record(const std::string& table, const std::string& relative_path) {
  std::lock_guard lock(mutex_);
  if (!directory_made_) {
    std::error_code ec;
    fs::create_directories(directory_, ec);
    if (ec) throw SourceError("checkpoint: cannot create " + directory_ + ": " + ec.message());
    directory_made_ = true;
  }
  // Not fsynced: a process that dies keeps its written pages; only a lost machine can lose
  // the line, and then the file it names is an unreferenced leftover, never wrong data.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    throw SourceError("checkpoint: cannot open " + path_ + ": " + std::strerror(errno));
  }
  const std::string line = table + " " + relative_path + "\n";
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int error = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    throw SourceError("checkpoint: cannot write " + path_ + ": " + std::strerror(error));
  }
  recorded_ = true;
}

std::function<void(const std::string&)> StagedFileList::For(const std::string& table) {
  return [this, table](const std::string& relative_path) { Record(table, relative_path); };
}

void StagedFileList::Clear() {
  std::lock_guard lock(mutex_);
  if (!recorded_) return;
  std::error_code ec;
  fs::remove(path_, ec);
  if (ec) spdlog::warn("checkpoint: could not remove {}: {}", path_, ec.message());
  recorded_ = false;
}

void DeleteUncommittedStagedFiles(
    const std::string& checkpoint_directory,
    const std::function<void(const std::string& table,
                             const std::vector<std::string>& relative_paths)>& delete_unnamed) {
  const fs::path directory = fs::path(checkpoint_directory) / kDirectory;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return;
  std::vector<fs::path> lists;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (EndsWith(entry.path().filename().string(), kSuffix)) lists.push_back(entry.path());
  }
  for (const auto& list : lists) {
    std::map<std::string, std::vector<std::string>> by_table;
    std::ifstream in(list);
    for (std::string line; std::getline(in, line);) {
      const auto space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string path = line.substr(space + 1);
      if (path.rfind("part-", 0) != 0 || path.find('/') != std::string::npos) continue;
      by_table[line.substr(0, space)].push_back(path);
    }
    for (const auto& [table, paths] : by_table) delete_unnamed(table, paths);
    fs::remove(list, ec);
  }
}

}  // namespace mssql_cdc
