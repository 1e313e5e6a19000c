// OAuth access tokens for the Google Cloud Storage requests the engine makes itself (the
// conditional upload of a commit, decision 0017), from the credentials Google's own libraries
// find (Application Default Credentials): the JSON file GOOGLE_APPLICATION_CREDENTIALS names
// (a service account's key, or a user's refresh token), else gcloud's
// application_default_credentials.json, else the metadata server of a Compute Engine VM or GKE
// pod (GCE_METADATA_HOST, by default metadata.google.internal). Arrow's GCS filesystem finds the
// same ones for the data files; it hands no token back, hence this.
#pragma once

#include <memory>
#include <string>

#include "storage/bearer_token.h"

namespace mssql_cdc::storage {

// The token source Application Default Credentials name, in the order above. Throws
// ConfigError for a credentials file that cannot be read or is of a kind the engine does not
// take (external_account, impersonated_service_account), naming the file and never its
// secrets; nullptr when there is no file and `metadata_server` is false.
std::unique_ptr<BearerTokenSource> FindGoogleCredentials(bool metadata_server);

// A service account's key file contents (type "service_account"): the signed JWT of RFC 7523
// exchanged at its token_uri. Throws ConfigError for a key that does not read.
std::unique_ptr<BearerTokenSource> ServiceAccountTokenSource(const std::string& json,
                                                             const std::string& origin);

// "header.claims.signature" of a JWT signed with RS256 by `private_key_pem`, for tests.
std::string SignJwtRs256(const std::string& header_json, const std::string& claims_json,
                         const std::string& private_key_pem);

}  // namespace mssql_cdc::storage
