// The S3 store: s3:// (and s3a://, Hadoop's name for the same store) URIs, opened through
// Arrow's S3 filesystem, with commits made by a SigV4-signed PutObject carrying
// If-None-Match: * (decision 0017).
//
// Settings are the AWS SDK's own, read where its users put them: credentials by the SDK's
// default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, AWS_PROFILE and
// the shared files, web identity, container and instance roles), the region from AWS_REGION
// or AWS_DEFAULT_REGION (else the bucket's own), and an S3-compatible store's address from
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (path-style requests then).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "storage/file_system.h"

namespace mssql_cdc::storage {

struct S3Location {
  std::string bucket;
  std::string key;  // without leading or trailing '/'; empty for the bucket's root
};

// Reads "s3://bucket/key" or "s3a://bucket/key". Throws ConfigError saying what is wrong (no
// bucket, a bucket name S3 does not allow, a query or fragment).
S3Location ParseS3Uri(const std::string& uri);

// The filesystem of the URI's bucket and the table's root in it ("bucket/key"). The first
// call for a bucket checks, before anything is written, that the bucket exists, that the
// credentials may read it, and that the store honours If-None-Match: * (a probe object
// created twice, then deleted); each failure is a ConfigError or PermissionError that says
// what to fix. Later calls share the checked filesystem. Arrow's S3 subsystem starts with the
// first call.
std::pair<std::shared_ptr<FileSystem>, std::string> OpenS3Store(const std::string& uri);

// Releases every S3 filesystem and shuts Arrow's S3 subsystem down, for good (store.h's
// ReleaseObjectStores).
void ReleaseS3Stores();

}  // namespace mssql_cdc::storage
