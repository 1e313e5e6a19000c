// A FileSystem over an object store (S3, ...): Arrow's filesystem reads, lists and streams
// data files; the store's ObjectRequests makes WriteIfAbsent atomic and deletes.
//
// WriteIfAbsent and Delete retry what the store turns away for now, with backoff, logging each
// retry.
// When a request's outcome is unknown (a timeout or a server error after the bytes were sent)
// it reads the object back instead of writing again: the same bytes mean this writer created
// it, other bytes mean another writer did, no object means the request did not take effect.
// Paths are the store's, bucket (or container) first: "bucket/key/...".
#pragma once

#include <memory>
#include <string>

#include "storage/object_requests.h"
#include "storage/file_system.h"
#include "storage/store_retry.h"

namespace arrow::fs {
class FileSystem;
}

namespace mssql_cdc::storage {

class ObjectStoreFileSystem final : public FileSystem {
 public:
  // `scheme` ("s3") names the store in messages, with the path: "s3://bucket/key".
  ObjectStoreFileSystem(std::string scheme, std::shared_ptr<arrow::fs::FileSystem> arrow,
                        std::unique_ptr<ObjectRequests> requests, RetryPolicy retry = {});

  bool Exists(const std::string& path) override;
  std::optional<std::string> ReadFile(const std::string& path) override;
  std::vector<FileInfo> List(const std::string& directory) override;
  std::vector<FileInfo> ListAfter(const std::string& directory, const std::string& after) override;
  // Object stores have no directories to create: a no-op.
  void CreateDirectories(const std::string& path) override;
  bool WriteIfAbsent(const std::string& path, const std::string& contents) override;
  void WriteAtomic(const std::string& path, const std::string& contents) override;
  void Delete(const std::string& path) override;
  FileInfo Stat(const std::string& path) override;
  std::shared_ptr<arrow::io::OutputStream> OpenOutputStream(const std::string& path) override;
  std::shared_ptr<arrow::io::RandomAccessFile> OpenInputFile(const std::string& path) override;

 private:
  std::string Uri(const std::string& path) const;
  // After attempt `attempt` at `doing` ("create") was turned away: throws SourceError when it
  // was the last, else logs the retry and sleeps the backoff.
  void WaitBeforeRetry(const std::string& path, const std::string& doing, int attempt,
                       const std::string& detail) const;

  std::string scheme_;
  std::shared_ptr<arrow::fs::FileSystem> arrow_;
  std::unique_ptr<ObjectRequests> requests_;
  RetryPolicy retry_;
};

}  // namespace mssql_cdc::storage
