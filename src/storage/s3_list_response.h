// Reading a ListObjectsV2 response (the XML S3 answers a listing with), for the listings the
// engine makes itself: Arrow's filesystem cannot start a listing after a given name.
#pragma once

#include <string>
#include <vector>

#include "storage/object_requests.h"

namespace mssql_cdc::storage {

// `prefix` is the listed prefix, ending in '/' (or empty for a bucket's root). Throws
// SourceError when the body is not a ListBucketResult.
ListPage ParseListObjectsV2(const std::string& body, const std::string& prefix);

}  // namespace mssql_cdc::storage
