#include "engine/checkpoint_directory.h"

#include <filesystem>

#include "core/errors.h"
#include "storage/store.h"

namespace mssql_cdc {

CheckpointDirectory::CheckpointDirectory(std::string location)
    : location_(std::move(location)), in_object_store_(storage::IsObjectStoreUri(location_)) {
  std::tie(fs_, root_) = storage::OpenStore(location_);
}

std::string CheckpointDirectory::Path(const std::string& relative) const {
  return relative.empty() ? root_ : root_ + "/" + relative;
}

std::optional<std::string> CheckpointDirectory::Read(const std::string& relative) const {
  return fs_->ReadFile(Path(relative));
}

void CheckpointDirectory::Write(const std::string& relative, const std::string& contents) {
  const std::string path = Path(relative);
  if (!in_object_store_) fs_->CreateDirectories(path.substr(0, path.rfind('/')));
  fs_->WriteAtomic(path, contents);
}

bool CheckpointDirectory::WriteIfAbsent(const std::string& relative, const std::string& contents) {
  const std::string path = Path(relative);
  if (!in_object_store_) fs_->CreateDirectories(path.substr(0, path.rfind('/')));
  return fs_->WriteIfAbsent(path, contents);
}

void CheckpointDirectory::Delete(const std::string& relative) { fs_->Delete(Path(relative)); }

std::vector<std::string> CheckpointDirectory::List(const std::string& relative) const {
  std::vector<std::string> names;
  for (const auto& entry : fs_->List(Path(relative))) {
    if (!entry.is_directory) names.push_back(entry.name);
  }
  return names;
}

bool CheckpointDirectory::Exists() const {
  if (in_object_store_) return !fs_->List(root_).empty();
  storage::CheckDirectoryLocation(location_, "checkpoint");
  return std::filesystem::is_directory(root_);
}

void CheckpointDirectory::Create() {
  if (!in_object_store_) fs_->CreateDirectories(root_);
}

}  // namespace mssql_cdc
