// The check every object store gets before anything is written to it: that it refuses a second
// conditional create of one object. A store that ignores the precondition (some S3-compatible
// ones do) would let two writers both commit one Delta version.
#pragma once

#include <memory>
#include <string>

#include "storage/file_system.h"
#include "storage/object_requests.h"

namespace arrow::fs {
class FileSystem;
}

namespace mssql_cdc::storage {

// Creates a probe object under `directory` (a store path) twice through `requests`, then
// deletes it through `fs`. Throws ConfigError naming `where` and `precondition` ("If-None-Match:
// *") when the second create was not refused, SourceError when the first failed.
void CheckConditionalWrites(FileSystem& fs, ObjectRequests& requests, const std::string& directory,
                            const std::string& where, const std::string& precondition);

// An object store's FileSystem (object_store_file_system.h) over Arrow's filesystem and the
// store's requests, once CheckConditionalWrites passed under `root`; logs that `where` opened.
std::shared_ptr<FileSystem> CheckedObjectStore(const std::string& scheme,
                                               std::shared_ptr<arrow::fs::FileSystem> arrow,
                                               std::unique_ptr<ObjectRequests> requests,
                                               const std::string& root, const std::string& where,
                                               const std::string& precondition);

}  // namespace mssql_cdc::storage
