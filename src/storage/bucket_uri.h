// The part every bucket-and-path URI shares ("s3://bucket/a/b/", "gs://bucket/a"): split into the
// bucket and the object path by the same rules, whichever store it names.
#pragma once

#include <string>

namespace mssql_cdc::storage {

struct BucketUri {
  std::string bucket;
  std::string path;  // without leading or trailing '/'; empty for the bucket's root
};

// `rest` is what follows the scheme's "://"; `kind` names the store in messages ("S3") and
// `form` shows the URI's shape ("s3://bucket/path"). Throws ConfigError for a query or fragment,
// no bucket, or an empty path segment; the bucket name's own rules are the store's to check.
BucketUri SplitBucketUri(const std::string& uri, const std::string& rest, const std::string& kind,
                         const std::string& form);

}  // namespace mssql_cdc::storage
