// Reading a ListObjectsV2 response (the XML S3 answers a listing with), for the listings the
// engine makes itself: Arrow's filesystem cannot start a listing after a given name.
#pragma once

#include <string>
#include <vector>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

struct S3ListPage {
  // The objects (Contents) and sub-directories (CommonPrefixes) of the page, named relative to
  // the listed prefix, in the store's order. A directory marker (the prefix itself) is left out.
  std::vector<FileInfo> entries;
  std::string next_continuation_token;  // empty on the last page
};

// `prefix` is the listed prefix, ending in '/' (or empty for a bucket's root). Throws
// SourceError when the body is not a ListBucketResult.
S3ListPage ParseListObjectsV2(const std::string& body, const std::string& prefix);

}  // namespace mssql_cdc::storage
