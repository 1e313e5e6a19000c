// The Google Cloud Storage store: gs://bucket/path URIs, opened through Arrow's GCS filesystem,
// with commits made by a media upload carrying ifGenerationMatch=0 (decision 0017).
//
// Credentials are Application Default Credentials, as Google's libraries find them
// (google_credentials.h). An emulator's address comes from STORAGE_EMULATOR_HOST, the variable
// Google's client libraries read (or CLOUD_STORAGE_EMULATOR_ENDPOINT, the one Arrow's client
// reads; both set and different is refused); requests to an emulator carry no credentials, as
// theirs do not.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

struct GcsLocation {
  std::string bucket;
  std::string path;  // without leading or trailing '/'; empty for the bucket's root
};

// Reads "gs://bucket/path". Throws ConfigError saying what is wrong.
GcsLocation ParseGcsUri(const std::string& uri);

// The filesystem of the URI's bucket and the table's root in it ("bucket/path"). The first
// call for a bucket checks, before anything is written, the credentials (a token is fetched),
// that the bucket exists and may be read, and that the store refuses a second upload with
// ifGenerationMatch=0 (a probe created twice, then deleted). Later calls share it.
std::pair<std::shared_ptr<FileSystem>, std::string> OpenGcsStore(const std::string& uri);

// Forgets every GCS filesystem (store.h's ReleaseObjectStores).
void ReleaseGcsStores();

}  // namespace mssql_cdc::storage
