#include "storage/azure_identity.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/ascii.h"
#include "core/errors.h"
#include "storage/environment.h"
#include "storage/http_client.h"

namespace mssql_cdc::storage {
namespace {

constexpr const char* kResource = "https://storage.azure.com";
constexpr const char* kDefaultAuthority = "https://login.microsoftonline.com/";
constexpr const char* kDefaultImds = "http://169.254.169.254";

std::string Required(const char* name, const std::string& why) {
  std::string value = EnvironmentVariable(name);
  if (value.empty()) throw ConfigError(why + " needs " + name + "; set it");
  return value;
}

std::string WithSlash(std::string url) {
  if (url.empty() || url.back() != '/') url += '/';
  return url;
}

// Client credentials at the tenant's token endpoint: a secret, or a federated token.
class TenantTokens final : public BearerTokenSource {
 public:
  explicit TenantTokens(AzureIdentity identity) : identity_(std::move(identity)) {}
  std::string Describe() const override { return identity_.Describe(); }

 protected:
  Fetched Fetch() override {
    std::string body = "grant_type=client_credentials&client_id=" +
                       PercentEncode(identity_.client_id, false) + "&scope=" +
                       PercentEncode(std::string(kResource) + "/.default", false);
    if (identity_.kind == AzureIdentity::Kind::kClientSecret) {
      body += "&client_secret=" + PercentEncode(identity_.client_secret, false);
    } else {
      // Kubernetes rotates the projected token, so it is read again for each fetch.
      std::ifstream in(identity_.token_file, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      // Sent as it is, as Azure's library (which fetches Arrow's tokens) sends it.
      const std::string assertion = text.str();
      if (!in || assertion.empty()) {
        throw PermissionError("AZURE_FEDERATED_TOKEN_FILE=" + identity_.token_file +
                              " cannot be read or is empty; it holds the workload's federated token");
      }
      body += "&client_assertion_type=" +
              PercentEncode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer", false) +
              "&client_assertion=" + PercentEncode(assertion, false);
    }
    return RequestToken(identity_.authority_host + PercentEncode(identity_.tenant_id, false) +
                            "/oauth2/v2.0/token",
                        FormPost(body), Describe());
  }

 private:
  AzureIdentity identity_;
};

// A managed identity: App Service's local endpoint, or the instance metadata service.
class ManagedIdentityTokens final : public BearerTokenSource {
 public:
  explicit ManagedIdentityTokens(AzureIdentity identity) : identity_(std::move(identity)) {}
  std::string Describe() const override { return identity_.Describe(); }

 protected:
  Fetched Fetch() override {
    HttpRequest request;
    request.method = "GET";
    std::string url;
    std::string query = "resource=" + PercentEncode(kResource, false);
    if (!identity_.client_id.empty()) query += "&client_id=" + PercentEncode(identity_.client_id, false);
    if (!identity_.identity_endpoint.empty()) {
      url = identity_.identity_endpoint + "?api-version=2019-08-01&" + query;
      request.headers = {{"X-IDENTITY-HEADER", identity_.identity_header}};
    } else {
      url = identity_.imds_host + "/metadata/identity/oauth2/token?api-version=2018-02-01&" + query;
      request.headers = {{"Metadata", "true"}};
    }
    return RequestToken(url, request, Describe());
  }

 private:
  AzureIdentity identity_;
};

AzureIdentity ManagedIdentity() {
  AzureIdentity identity;
  identity.kind = AzureIdentity::Kind::kManagedIdentity;
  identity.client_id = EnvironmentVariable("AZURE_CLIENT_ID");
  if (!EnvironmentVariable("IDENTITY_ENDPOINT").empty() && !EnvironmentVariable("IDENTITY_HEADER").empty()) {
    identity.identity_endpoint = EnvironmentVariable("IDENTITY_ENDPOINT");
    identity.identity_header = EnvironmentVariable("IDENTITY_HEADER");
    (void)ParseHttpUrl(identity.identity_endpoint, "IDENTITY_ENDPOINT");
    return identity;
  }
  for (const char* other : {"MSI_ENDPOINT", "IMDS_ENDPOINT", "IDENTITY_SERVER_THUMBPRINT"}) {
    if (!EnvironmentVariable(other).empty()) {
      throw ConfigError(std::string(other) + " is set: the managed identity of Cloud Shell, Azure Arc "
                        "or Service Fabric, which the engine does not take; use a VM's, App "
                        "Service's or Container Apps' managed identity, workload identity or a "
                        "service principal");
    }
  }
  const std::string host = EnvironmentVariable("AZURE_POD_IDENTITY_AUTHORITY_HOST");
  identity.imds_host = host.empty() ? kDefaultImds : host;
  while (!identity.imds_host.empty() && identity.imds_host.back() == '/') identity.imds_host.pop_back();
  (void)ParseHttpUrl(identity.imds_host, "AZURE_POD_IDENTITY_AUTHORITY_HOST");
  return identity;
}

AzureIdentity TenantIdentity(AzureIdentity::Kind kind, const std::string& why) {
  AzureIdentity identity;
  identity.kind = kind;
  identity.tenant_id = Required("AZURE_TENANT_ID", why);
  identity.client_id = Required("AZURE_CLIENT_ID", why);
  if (kind == AzureIdentity::Kind::kClientSecret) {
    identity.client_secret = Required("AZURE_CLIENT_SECRET", why);
  } else {
    identity.token_file = Required("AZURE_FEDERATED_TOKEN_FILE", why);
  }
  const std::string authority = EnvironmentVariable("AZURE_AUTHORITY_HOST");
  identity.authority_host = WithSlash(authority.empty() ? kDefaultAuthority : authority);
  // Azure's identity library refuses (by ending the process) a token endpoint without TLS.
  if (ParseHttpUrl(identity.authority_host, "AZURE_AUTHORITY_HOST").first.tls == false) {
    throw ConfigError("AZURE_AUTHORITY_HOST must be an https:// address; tokens are not fetched "
                      "without TLS");
  }
  return identity;
}

}  // namespace

std::string AzureIdentity::Describe() const {
  switch (kind) {
    case Kind::kClientSecret:
      return "the service principal " + client_id + " of tenant " + tenant_id + " (AZURE_CLIENT_SECRET)";
    case Kind::kWorkloadIdentity:
      return "the workload identity " + client_id + " of tenant " + tenant_id;
    case Kind::kManagedIdentity:
      break;
  }
  return std::string(client_id.empty() ? "the system-assigned managed identity"
                                        : "the managed identity " + client_id) +
         (identity_endpoint.empty() ? " (instance metadata service at " + imds_host + ")"
                                    : " (IDENTITY_ENDPOINT)");
}

std::optional<AzureIdentity> FindAzureIdentity() {
  const std::string chosen = EnvironmentVariable("AZURE_TOKEN_CREDENTIALS");
  if (!chosen.empty()) {
    const std::string lower = AsciiLower(chosen);
    const std::string why = "AZURE_TOKEN_CREDENTIALS=" + chosen;
    if (lower == "environmentcredential") return TenantIdentity(AzureIdentity::Kind::kClientSecret, why);
    if (lower == "workloadidentitycredential") {
      return TenantIdentity(AzureIdentity::Kind::kWorkloadIdentity, why);
    }
    if (lower == "managedidentitycredential") return ManagedIdentity();
    throw ConfigError("AZURE_TOKEN_CREDENTIALS='" + chosen + "' is not one the engine takes: "
                      "EnvironmentCredential, WorkloadIdentityCredential or "
                      "ManagedIdentityCredential");
  }
  const bool secret = !EnvironmentVariable("AZURE_CLIENT_SECRET").empty();
  const bool federated = !EnvironmentVariable("AZURE_FEDERATED_TOKEN_FILE").empty();
  if (secret && federated) {
    throw ConfigError("both AZURE_CLIENT_SECRET and AZURE_FEDERATED_TOKEN_FILE are set; unset "
                      "one, or name the one to use in AZURE_TOKEN_CREDENTIALS "
                      "(EnvironmentCredential or WorkloadIdentityCredential)");
  }
  if (secret) return TenantIdentity(AzureIdentity::Kind::kClientSecret, "AZURE_CLIENT_SECRET");
  if (federated) {
    return TenantIdentity(AzureIdentity::Kind::kWorkloadIdentity, "AZURE_FEDERATED_TOKEN_FILE");
  }
  if (!EnvironmentVariable("IDENTITY_ENDPOINT").empty() && !EnvironmentVariable("IDENTITY_HEADER").empty()) return ManagedIdentity();
  return std::nullopt;
}

std::unique_ptr<BearerTokenSource> AzureIdentityTokens(const AzureIdentity& identity) {
  if (identity.kind == AzureIdentity::Kind::kManagedIdentity) {
    return std::make_unique<ManagedIdentityTokens>(identity);
  }
  return std::make_unique<TenantTokens>(identity);
}

}  // namespace mssql_cdc::storage
