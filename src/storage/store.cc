#include "storage/store.h"

#include <filesystem>

#include "core/errors.h"
#include "core/user_text.h"

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

void CheckDirectoryLocation(const std::string& uri, const std::string& what) {
  if (IsObjectStoreUri(uri)) return;
  namespace fs = std::filesystem;
  const fs::path location(LocalPathOfUri(uri));  // absolute and normalised already
  for (fs::path path = location; !path.empty(); path = path.parent_path()) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (fs::is_directory(status)) return;
    if (fs::exists(status)) {
      const std::string where = path == location ? "it" : QuoteUserText(path.string(), kPathShown) + ", a folder above it,";
      throw ConfigError(what + " " + QuoteUserText(uri, kPathShown) + " cannot be a directory: " + where +
                        " exists and is not a directory; give a path where a directory can be made");
    }
    if (path == path.parent_path()) return;
  }
}

void ReleaseObjectStores() {
  ReleaseAzureStores();
  ReleaseGcsStores();
  ReleaseS3Stores();
}

}  // namespace mssql_cdc::storage
