#include "storage/store.h"

#include "storage/local_file_system.h"
#include "storage/s3_store.h"

namespace mssql_cdc::storage {

bool IsObjectStoreUri(const std::string& uri) {
  return uri.rfind("s3://", 0) == 0 || uri.rfind("s3a://", 0) == 0;
}

std::pair<std::shared_ptr<FileSystem>, std::string> OpenStore(const std::string& uri) {
  if (uri.rfind("s3://", 0) == 0 || uri.rfind("s3a://", 0) == 0) return OpenS3Store(uri);
  return {LocalFileSystem(), LocalPathOfUri(uri)};
}

void ReleaseObjectStores() { ReleaseS3Stores(); }

}  // namespace mssql_cdc::storage
