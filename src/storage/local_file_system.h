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

}  // namespace mssql_cdc::storage
