#include "storage/bucket_uri.h"

#include "core/errors.h"

namespace mssql_cdc::storage {

BucketUri SplitBucketUri(const std::string& uri, const std::string& rest, const std::string& kind,
                         const std::string& form) {
  if (rest.find_first_of("?#") != std::string::npos) {
    throw ConfigError(kind + " URI " + uri + " has a query or fragment; give " + form + " only");
  }
  BucketUri parts;
  const auto slash = rest.find('/');
  parts.bucket = rest.substr(0, slash);
  if (parts.bucket.empty()) {
    throw ConfigError(kind + " URI " + uri + " names no bucket; write " + form);
  }
  std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.find("//") != std::string::npos || (!path.empty() && path.front() == '/')) {
    throw ConfigError(kind + " URI " + uri + " has an empty path segment ('//')");
  }
  parts.path = path;
  return parts;
}

}  // namespace mssql_cdc::storage
