// Where a table or checkpoint URI lives: the filesystem that opens it and the root path in it.
//   /abs/path, rel/path, file:///abs/path   the local filesystem
//   s3://bucket/key, s3a://bucket/key        Amazon S3 or an S3-compatible store (s3_store.h)
//   abfss://container@account.dfs.core.windows.net/path, az://container/path
//                                            Azure Blob storage (azure_store.h)
//   gs://bucket/path                         Google Cloud Storage (gcs_store.h)
// Any other scheme is refused with the list of these.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "storage/file_system.h"
#include "storage/local_file_system.h"

namespace mssql_cdc::storage {

// Throws ConfigError for a URI no store here can open, naming the schemes that can; an object
// store's own checks (s3_store.h) run on its first use.
std::pair<std::shared_ptr<FileSystem>, std::string> OpenStore(const std::string& uri);

// Whether `uri` names an object store rather than the local filesystem (by its scheme alone).
bool IsObjectStoreUri(const std::string& uri);

// Throws ConfigError when `uri` is a local path that cannot be a directory: it, or a folder
// above it, exists and is something else (a file). `what` names the location in the message
// ("bronze table", "checkpoint"). Object stores have no such files: nothing to check there.
void CheckDirectoryLocation(const std::string& uri, const std::string& what);

// Releases the object stores' clients and shuts their SDKs down for good. The native executable
// calls it before it returns from main, so that no SDK is torn down by static destructors; a
// Python process leaves that to pyarrow.
void ReleaseObjectStores();

}  // namespace mssql_cdc::storage
