// Reading a List Blobs response (Azure Blob's EnumerationResults), for the listings the engine
// makes itself: Arrow's filesystem cannot start a listing at a given name.
#pragma once

#include <string>
#include <vector>

#include "storage/object_requests.h"

namespace mssql_cdc::storage {

// `prefix` is the listed prefix, ending in '/' (or empty for a container's root). Throws
// SourceError when the body is not an EnumerationResults.
ListPage ParseListBlobs(const std::string& body, const std::string& prefix);

}  // namespace mssql_cdc::storage
