// Entra ID (Azure AD) identities for Azure Blob storage, read where Azure's identity libraries
// read them, and the tokens the engine's own Blob requests carry (the conditional Put Blob of
// a commit, decision 0017). Arrow's Azure filesystem is given the same identity and fetches
// its own tokens for the data files; it hands none back, hence this.
//
// Which identity, by the rule of Azure's DefaultAzureCredential narrowed to the three kinds
// a server uses, and never guessed between:
// - AZURE_TOKEN_CREDENTIALS names one (EnvironmentCredential, WorkloadIdentityCredential or
//   ManagedIdentityCredential); any other value is refused;
// - else AZURE_CLIENT_SECRET means a service principal's secret, AZURE_FEDERATED_TOKEN_FILE
//   workload identity (both set is refused), IDENTITY_ENDPOINT with IDENTITY_HEADER the
//   managed identity of App Service, Functions or Container Apps;
// - else there is none. A VM's managed identity (the instance metadata service) has no
//   variable of its own: AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential selects it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "storage/bearer_token.h"

namespace mssql_cdc::storage {

struct AzureIdentity {
  enum class Kind { kClientSecret, kWorkloadIdentity, kManagedIdentity };
  Kind kind = Kind::kClientSecret;
  std::string tenant_id;
  std::string client_id;        // AZURE_CLIENT_ID; for a managed identity, empty: the system-assigned one
  std::string client_secret;    // kClientSecret; never part of a message
  std::string token_file;       // kWorkloadIdentity: AZURE_FEDERATED_TOKEN_FILE, read at each fetch
  std::string authority_host;   // "https://login.microsoftonline.com/" or AZURE_AUTHORITY_HOST
  std::string identity_endpoint;  // kManagedIdentity on App Service: IDENTITY_ENDPOINT
  std::string identity_header;    // and IDENTITY_HEADER; never part of a message
  std::string imds_host;          // kManagedIdentity elsewhere: "http://169.254.169.254"

  // "the service principal <client id> of tenant <tenant>", for messages.
  std::string Describe() const;
};

// The identity the environment names (the rule above), or nullopt when it names none. Throws
// ConfigError for a value that is refused or a setting that is missing, saying which.
std::optional<AzureIdentity> FindAzureIdentity();

// The tokens of `identity` for Azure Storage (https://storage.azure.com).
std::unique_ptr<BearerTokenSource> AzureIdentityTokens(const AzureIdentity& identity);

}  // namespace mssql_cdc::storage
