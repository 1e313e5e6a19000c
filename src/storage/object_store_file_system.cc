#include "storage/object_store_file_system.h"

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "core/errors.h"
#include "storage/store_errors.h"

namespace mssql_cdc::storage {

ObjectStoreFileSystem::ObjectStoreFileSystem(std::string scheme,
                                             std::shared_ptr<arrow::fs::FileSystem> arrow,
                                             std::unique_ptr<ObjectRequests> requests,
                                             RetryPolicy retry)
    : scheme_(std::move(scheme)),
      arrow_(std::move(arrow)),
      requests_(std::move(requests)),
      retry_(retry) {}

std::string ObjectStoreFileSystem::Uri(const std::string& path) const {
  return scheme_ + "://" + path;
}

bool ObjectStoreFileSystem::Exists(const std::string& path) {
  auto info = arrow_->GetFileInfo(path);
  if (!info.ok()) ThrowStoreError(info.status(), "cannot look up " + Uri(path));
  return info->type() != arrow::fs::FileType::NotFound;
}

std::optional<std::string> ObjectStoreFileSystem::ReadFile(const std::string& path) {
  // One GET, not Arrow's size-then-range reads, which mix two versions of a replaced object.
  for (int attempt = 1;; ++attempt) {
    try {
      return requests_->Get(path);
    } catch (const SourceError& e) {
      WaitBeforeRetry(path, "read", attempt, e.what());
    }
  }
}

std::vector<FileInfo> ObjectStoreFileSystem::List(const std::string& directory) {
  arrow::fs::FileSelector selector;
  selector.base_dir = directory;
  selector.allow_not_found = true;
  selector.recursive = false;
  auto found = arrow_->GetFileInfo(selector);
  if (!found.ok()) ThrowStoreError(found.status(), "cannot list " + Uri(directory));
  std::vector<FileInfo> entries;
  entries.reserve(found->size());
  for (const auto& entry : *found) {
    FileInfo info;
    info.name = entry.base_name();
    info.is_directory = entry.type() == arrow::fs::FileType::Directory;
    info.size = info.is_directory ? 0 : entry.size();
    info.modification_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    entry.mtime().time_since_epoch())
                                    .count();
    entries.push_back(std::move(info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  return entries;
}

std::vector<FileInfo> ObjectStoreFileSystem::ListAfter(const std::string& directory,
                                                       const std::string& after) {
  for (int attempt = 1;; ++attempt) {
    try {
      return requests_->ListAfter(directory, after);
    } catch (const SourceError& e) {
      WaitBeforeRetry(directory, "list", attempt, e.what());
    }
  }
}

void ObjectStoreFileSystem::CreateDirectories(const std::string&) {}

bool ObjectStoreFileSystem::WriteIfAbsent(const std::string& path, const std::string& contents) {
  for (int attempt = 1;; ++attempt) {
    PutResult result = requests_->PutIfAbsent(path, contents);
    if (result.outcome == PutOutcome::kCreated) return true;
    if (result.outcome == PutOutcome::kExists) return false;
    if (result.outcome == PutOutcome::kUnknown) {
      // Never write blindly again: the object, if there is one, tells who created it.
      std::optional<std::string> stored;
      for (int read = 1;; ++read) {
        try {
          stored = ReadFile(path);
          break;
        } catch (const SourceError& e) {
          if (read >= retry_.attempts) throw;
          spdlog::warn("{}: reading back after an unknown outcome failed ({}); retrying",
                       Uri(path), e.what());
          std::this_thread::sleep_for(BackoffDelay(retry_, read));
        }
      }
      if (stored) {
        const bool ours = *stored == contents;
        spdlog::warn("{}: the create's outcome was unknown ({}); the object exists with {} bytes",
                     Uri(path), result.detail, ours ? "this writer's" : "another writer's");
        return ours;
      }
    }
    WaitBeforeRetry(path, "create", attempt, result.detail);
  }
}

void ObjectStoreFileSystem::WriteAtomic(const std::string& path, const std::string& contents) {
  // One request, not Arrow's stream: Azure's creates an empty object first, which a reader of
  // _last_checkpoint could see.
  for (int attempt = 1;; ++attempt) {
    const PutResult result = requests_->Put(path, contents);
    if (result.outcome == PutOutcome::kCreated) return;
    WaitBeforeRetry(path, "write", attempt, result.detail);
  }
}

void ObjectStoreFileSystem::Delete(const std::string& path) {
  for (int attempt = 1;; ++attempt) {
    const PutResult result = requests_->Delete(path);
    if (result.outcome == PutOutcome::kCreated) return;
    WaitBeforeRetry(path, "delete", attempt, result.detail);
  }
}

void ObjectStoreFileSystem::WaitBeforeRetry(const std::string& path, const std::string& doing,
                                            int attempt, const std::string& detail) const {
  if (attempt >= retry_.attempts) {
    throw SourceError("cannot " + doing + " " + Uri(path) + " after " + std::to_string(attempt) +
                      " attempts: " + detail);
  }
  const auto delay = BackoffDelay(retry_, attempt);
  spdlog::warn("{}: {} attempt {} of {} turned away ({}); retrying in {} ms", Uri(path), doing,
               attempt, retry_.attempts, detail, delay.count());
  std::this_thread::sleep_for(delay);
}

FileInfo ObjectStoreFileSystem::Stat(const std::string& path) {
  auto found = arrow_->GetFileInfo(path);
  if (!found.ok()) ThrowStoreError(found.status(), "cannot look up " + Uri(path));
  if (found->type() == arrow::fs::FileType::NotFound) {
    throw SourceError("cannot stat " + Uri(path) + ": no such object");
  }
  FileInfo info;
  info.name = found->base_name();
  info.size = found->size();
  info.is_directory = found->type() == arrow::fs::FileType::Directory;
  info.modification_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  found->mtime().time_since_epoch())
                                  .count();
  return info;
}

std::shared_ptr<arrow::io::OutputStream> ObjectStoreFileSystem::OpenOutputStream(
    const std::string& path) {
  auto stream = arrow_->OpenOutputStream(path);
  if (!stream.ok()) ThrowStoreError(stream.status(), "cannot create " + Uri(path));
  return *stream;
}

std::shared_ptr<arrow::io::RandomAccessFile> ObjectStoreFileSystem::OpenInputFile(
    const std::string& path) {
  auto file = arrow_->OpenInputFile(path);
  if (!file.ok()) ThrowStoreError(file.status(), "cannot open " + Uri(path));
  return *file;
}

}  // namespace mssql_cdc::storage
