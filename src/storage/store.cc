#include "storage/store.h"

#include "storage/azure_store.h"
#include "storage/gcs_store.h"
#include "storage/local_file_system.h"
#include "storage/s3_store.h"

namespace mssql_cdc::storage {

namespace {

bool IsS3Uri(const std::string& uri) {
  return uri.rfind("s3://", 0) == 0 || uri.rfind("s3a://", 0) == 0;
}

bool IsAzureUri(const std::string& uri) {
  return uri.rfind("abfss://", 0) == 0 || uri.rfind("az://", 0) == 0;
}

bool IsGcsUri(const std::string& uri) { return uri.rfind("gs://", 0) == 0; }

}  // namespace

bool IsObjectStoreUri(const std::string& uri) {
  return IsS3Uri(uri) || IsAzureUri(uri) || IsGcsUri(uri);
}

std::pair<std::shared_ptr<FileSystem>, std::string> OpenStore(const std::string& uri) {
  if (IsS3Uri(uri)) return OpenS3Store(uri);
  if (IsAzureUri(uri)) return OpenAzureStore(uri);
  if (IsGcsUri(uri)) return OpenGcsStore(uri);
  return {LocalFileSystem(), LocalPathOfUri(uri)};
}

void ReleaseObjectStores() {
  ReleaseAzureStores();
  ReleaseGcsStores();
  ReleaseS3Stores();
}

}  // namespace mssql_cdc::storage
