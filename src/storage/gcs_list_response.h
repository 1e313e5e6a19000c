// Reading an objects.list answer of GCS's JSON API, for the listings the engine makes itself:
// Arrow's filesystem cannot start a listing at a given name (startOffset).
#pragma once

#include <string>
#include <vector>

#include "storage/object_requests.h"

namespace mssql_cdc::storage {

// `prefix` is the listed prefix, ending in '/' (or empty for a bucket's root). Throws
// SourceError when the body is not an objects.list answer.
ListPage ParseGcsObjectList(const std::string& body, const std::string& prefix);

}  // namespace mssql_cdc::storage
