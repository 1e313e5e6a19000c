// The local filesystem: commits made atomic by link(2) (or renameat2 without replacing), whole
// files by a rename, each made durable before it is published.
#pragma once

#include <memory>
#include <string>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

std::shared_ptr<FileSystem> LocalFileSystem();

// The absolute, normalised path of a local path or a file:// URI (file:///p, file://localhost/p,
// file:/p, percent escapes decoded), without a trailing '/'. Throws ConfigError for another
// host, a relative file URI, or a URI of another scheme (naming the schemes the engine opens).
std::string LocalPathOfUri(const std::string& uri);

// Refuses (ConfigError naming `what`) a location that Spark and the engine would read as two
// places: a relative path, which Spark takes against its default filesystem and the engine
// against the working directory, and a file URI of another host. Other URIs pass.
void CheckSharedLocation(const std::string& location, const std::string& what);

}  // namespace mssql_cdc::storage
