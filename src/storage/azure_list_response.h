// Reading a List Blobs response (Azure Blob's EnumerationResults), for the listings the engine
// makes itself: Arrow's filesystem cannot start a listing at a given name.
#pragma once

#include <string>
#include <vector>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

struct AzureListPage {
  // The blobs and virtual directories (BlobPrefix) of the page, named relative to the listed
  // prefix. A directory marker (a name ending in '/') is left out.
  std::vector<FileInfo> entries;
  std::string next_marker;  // empty on the last page
};

// `prefix` is the listed prefix, ending in '/' (or empty for a container's root). Throws
// SourceError when the body is not an EnumerationResults.
AzureListPage ParseListBlobs(const std::string& body, const std::string& prefix);

}  // namespace mssql_cdc::storage
