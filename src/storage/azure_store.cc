#include "storage/azure_store.h"

#include <arrow/filesystem/azurefs.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/ascii.h"
#include "core/errors.h"
#include "storage/aws_signature.h"
#include "storage/azure_identity.h"
#include "storage/azure_list_response.h"
#include "storage/base64.h"
#include "storage/azure_signature.h"
#include "storage/conditional_write_probe.h"
#include "storage/environment.h"
#include "storage/http_client.h"
#include "storage/http_proxy.h"
#include "storage/object_requests.h"
#include "storage/opened_stores.h"
#include "storage/store_errors.h"
#include "storage/xml_text.h"

namespace mssql_cdc::storage {
namespace {

// startFrom in List Blobs needs 2026-02-06 or later; older services answer without it.
constexpr const char* kApiVersion = "2026-02-06";

// Azurite's documented development account (UseDevelopmentStorage=true).
constexpr const char* kDevelopmentAccount = "devstoreaccount1";
constexpr const char* kDevelopmentKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

bool ValidAccountName(const std::string& name) {
  if (name.size() < 3 || name.size() > 24) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

bool ValidContainerName(const std::string& name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-' && name.find("--") == std::string::npos;
}

// The settings one container is opened with: a key (decoded), a SAS token or an identity. No
// key, token or secret is ever part of a message.
struct AzureSettings {
  std::string account;
  std::string key;
  std::string sas;  // without the leading '?'
  std::optional<AzureIdentity> identity;
  HttpEndpoint endpoint;
  bool path_style = false;  // the account is the URL's first segment (emulators)
  std::string source;       // where the settings came from, for messages
};

AzureSettings ReadSettings(const AzureLocation& location, const std::string& uri) {
  const std::string connection = EnvironmentVariable("AZURE_STORAGE_CONNECTION_STRING");
  const std::string env_account = EnvironmentVariable("AZURE_STORAGE_ACCOUNT");
  const std::string env_key = EnvironmentVariable("AZURE_STORAGE_KEY");
  const std::string env_sas = EnvironmentVariable("AZURE_STORAGE_SAS_TOKEN");
  AzureSettings settings;
  settings.identity = FindAzureIdentity();
  std::string key_text, blob_endpoint, suffix = location.endpoint_suffix, protocol = "https";
  if (!connection.empty()) {
    if (!env_account.empty() || !env_key.empty() || !env_sas.empty()) {
      throw ConfigError("both AZURE_STORAGE_CONNECTION_STRING and AZURE_STORAGE_ACCOUNT, "
                        "AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN are set; set one of the "
                        "two ways only");
    }
    settings.source = "AZURE_STORAGE_CONNECTION_STRING";
    auto parts = ParseAzureConnectionString(connection);
    auto part = [&](const char* name) {
      auto found = parts.find(name);
      return found == parts.end() ? std::string() : found->second;
    };
    if (AsciiLower(part("UseDevelopmentStorage")) == "true") {
      settings.account = kDevelopmentAccount;
      key_text = kDevelopmentKey;
      blob_endpoint = "http://127.0.0.1:10000/" + std::string(kDevelopmentAccount);
    }
    if (!part("AccountName").empty()) settings.account = part("AccountName");
    if (!part("AccountKey").empty()) key_text = part("AccountKey");
    settings.sas = part("SharedAccessSignature");
    if (!part("BlobEndpoint").empty()) blob_endpoint = part("BlobEndpoint");
    if (!part("EndpointSuffix").empty()) {
      if (!suffix.empty() && suffix != part("EndpointSuffix")) {
        throw ConfigError("the URI " + uri + " names the endpoint suffix " + suffix +
                          " but AZURE_STORAGE_CONNECTION_STRING names " +
                          part("EndpointSuffix") + "; make them agree");
      }
      suffix = part("EndpointSuffix");
    }
    if (!part("DefaultEndpointsProtocol").empty()) {
      protocol = AsciiLower(part("DefaultEndpointsProtocol"));
    }
  } else {
    settings.source = "AZURE_STORAGE_ACCOUNT";
    settings.account = env_account;
    key_text = env_key;
    settings.sas = env_sas;
  }
  if (!settings.sas.empty() && settings.sas.front() == '?') settings.sas.erase(0, 1);
  if (!key_text.empty() && !settings.sas.empty()) {
    throw ConfigError("both an account key and a SAS token are set (" + settings.source +
                      "); give one of the two");
  }
  if (settings.identity && (!key_text.empty() || !settings.sas.empty())) {
    throw ConfigError("both " + std::string(key_text.empty() ? "a SAS token" : "an account key") +
                      " (" + settings.source + ") and " + settings.identity->Describe() +
                      " are set; give one of the two");
  }
  if (location.account.empty()) {
    if (settings.account.empty()) {
      throw ConfigError(uri + " names no storage account: set AZURE_STORAGE_ACCOUNT (or "
                        "AccountName in AZURE_STORAGE_CONNECTION_STRING), or write "
                        "abfss://container@account.dfs.core.windows.net/path");
    }
  } else if (!settings.account.empty() && settings.account != location.account) {
    throw ConfigError("the URI " + uri + " names the storage account '" + location.account +
                      "' but " + settings.source + " names '" + settings.account +
                      "'; make them agree");
  } else {
    settings.account = location.account;
  }
  if (!ValidAccountName(settings.account)) {
    throw ConfigError("'" + settings.account + "' is not a storage account name (3 to 24 "
                      "lower-case letters and digits)");
  }
  if (key_text.empty() && settings.sas.empty() && !settings.identity) {
    throw PermissionError(
        "no Azure Storage credentials were found for account '" + settings.account +
        "': set AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN (with AZURE_STORAGE_ACCOUNT), "
        "AZURE_STORAGE_CONNECTION_STRING with an AccountKey or SharedAccessSignature, or an "
        "identity: AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE (with AZURE_TENANT_ID and "
        "AZURE_CLIENT_ID), or AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential");
  }
  if (!key_text.empty()) {
    auto decoded = Base64Decode(key_text);
    if (!decoded) {
      throw ConfigError("the account key of '" + settings.account + "' (" + settings.source +
                        ") is not base64; copy it again from the storage account's access keys");
    }
    settings.key = *decoded;
  }
  if (!blob_endpoint.empty()) {
    // "scheme://host[:port]/account" (an emulator, path-style) or "scheme://account.host".
    auto [endpoint, path] = ParseHttpUrl(blob_endpoint, "BlobEndpoint in " + settings.source);
    while (!path.empty() && path.back() == '/') path.pop_back();
    settings.endpoint = endpoint;
    if (path == "/" + settings.account) {
      settings.path_style = true;
    } else if (!path.empty() || settings.endpoint.host.rfind(settings.account + ".", 0) != 0) {
      throw ConfigError("BlobEndpoint in " + settings.source + " must be https://" +
                        settings.account + ".blob.<suffix> or an emulator's "
                        "http://host:port/" + settings.account);
    }
  } else {
    if (protocol != "https" && protocol != "http") {
      throw ConfigError("DefaultEndpointsProtocol in " + settings.source +
                        " must be https or http");
    }
    settings.endpoint.tls = protocol == "https";
    settings.endpoint.port = settings.endpoint.tls ? 443 : 80;
    settings.endpoint.host =
        settings.account + ".blob." + (suffix.empty() ? "core.windows.net" : suffix);
  }
  if (settings.identity && !settings.endpoint.tls) {
    throw ConfigError("the Blob endpoint of " + settings.source + " is http://, and an Entra ID "
                      "token is only sent over https; use an https:// endpoint");
  }
  return settings;
}

// What authorizes the requests, for messages.
std::string Credential(const AzureSettings& settings) {
  if (settings.identity) return settings.identity->Describe();
  return settings.sas.empty() ? "the account key" : "the SAS token";
}

// Put Blob (with If-None-Match: * for a commit), Get Blob, Delete Blob and List Blobs, signed
// with the account key, carrying the SAS token, or an identity's bearer token.
class AzureObjectRequests final : public ObjectRequests {
 public:
  AzureObjectRequests(AzureSettings settings, std::unique_ptr<BearerTokenSource> tokens)
      : settings_(std::move(settings)), tokens_(std::move(tokens)) {}

  PutResult PutIfAbsent(const std::string& path, const std::string& contents) override {
    return Upload(path, contents, /*if_absent=*/true);
  }

  PutResult Put(const std::string& path, const std::string& contents) override {
    return Upload(path, contents, /*if_absent=*/false);
  }

  PutResult Delete(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("DELETE", path, {}, {}, "", response)) return *failed;
    if (response.status == 202 || response.status == 200 ||
        (response.status == 404 && ErrorCode(response) == "BlobNotFound")) {
      return {PutOutcome::kCreated, ""};
    }
    return Otherwise(response, path, "delete");
  }

  std::optional<std::string> Get(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("GET", path, {}, {}, "", response)) {
      throw SourceError(Uri(path) + ": " + failed->detail);
    }
    if (response.status == 200) return std::move(response.body);
    if (response.status == 404 && ErrorCode(response) == "BlobNotFound") return std::nullopt;
    const PutResult other = Otherwise(response, path, "read");
    throw SourceError(Uri(path) + ": reading failed (" + other.detail + ")");
  }

  std::vector<FileInfo> ListAfter(const std::string& directory,
                                  const std::string& after) override {
    const auto [container, prefix] = BucketAndPrefix(directory);
    // startFrom includes the name itself, and a service older than it ignores it.
    return CollectListing(
        [&](const std::string& marker) {
          std::vector<std::pair<std::string, std::string>> query = {
              {"comp", "list"}, {"delimiter", "/"}, {"prefix", prefix},
              {"restype", "container"}, {"startFrom", prefix + after}};
          if (!marker.empty()) query.emplace_back("marker", marker);
          HttpResponse response;
          if (auto failed = Send("GET", container, query, {}, "", response)) {
            throw SourceError(Uri(directory) + ": listing failed (" + failed->detail + ")");
          }
          if (response.status != 200) {
            const PutResult other = Otherwise(response, directory, "list");
            throw SourceError(Uri(directory) + ": listing failed (" + other.detail + ")");
          }
          return ParseListBlobs(response.body, prefix);
        },
        after);
  }

 private:
  static std::string Uri(const std::string& path) { return "az://" + path; }

  PutResult Upload(const std::string& path, const std::string& contents, bool if_absent) {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", "application/octet-stream"}, {"x-ms-blob-type", "BlockBlob"}};
    if (if_absent) headers.emplace_back("If-None-Match", "*");
    HttpResponse response;
    if (auto failed = Send("PUT", path, {}, headers, contents, response)) return *failed;
    if (response.status == 201) return {PutOutcome::kCreated, ""};
    const std::string code = ErrorCode(response);
    if (if_absent && (response.status == 412 ||
                      (response.status == 409 && code == "BlobAlreadyExists"))) {
      return {PutOutcome::kExists, code};
    }
    return Otherwise(response, path, "create");
  }

  static std::string ErrorCode(const HttpResponse& response) {
    if (auto found = response.headers.find("x-ms-error-code"); found != response.headers.end()) {
      return found->second;
    }
    if (std::string code = XmlText(response.body, "Code"); !code.empty()) return code;
    return "HTTP " + std::to_string(response.status);
  }

  // Sends one request for `path` ("container" or "container/blob"); the outcome when no
  // response came.
  std::optional<PutResult> Send(const std::string& method, const std::string& path,
                                const std::vector<std::pair<std::string, std::string>>& query,
                                std::vector<std::pair<std::string, std::string>> headers,
                                const std::string& body, HttpResponse& response) {
    HttpRequest request;
    request.method = method;
    request.target = (settings_.path_style ? "/" + settings_.account : "") + "/" +
                     S3EncodeKey(path);
    std::string encoded_query;
    for (const auto& [name, value] : query) {
      encoded_query += (encoded_query.empty() ? "" : "&") + name + "=" + AwsEncodeQueryValue(value);
    }
    if (!settings_.sas.empty()) {
      encoded_query += (encoded_query.empty() ? "" : "&") + settings_.sas;
    }
    if (!encoded_query.empty()) request.target += "?" + encoded_query;
    request.headers = std::move(headers);
    request.headers.emplace_back("x-ms-version", kApiVersion);
    request.body = body;
    if (tokens_) {
      request.headers.emplace_back("x-ms-date", HttpDate(std::chrono::system_clock::now()));
      request.headers.emplace_back("Authorization", "Bearer " + tokens_->Token());
    } else if (settings_.sas.empty()) {
      SignAzureSharedKey(request, settings_.account, settings_.key, query,
                         std::chrono::system_clock::now());
    } else {
      request.headers.emplace_back("x-ms-date", HttpDate(std::chrono::system_clock::now()));
    }
    return SendObjectRequest(settings_.endpoint, request, response);
  }

  // The answers every request shares: throttling and server errors to retry, and refusals.
  PutResult Otherwise(const HttpResponse& response, const std::string& path,
                      const std::string& doing) {
    const std::string code = ErrorCode(response);
    const std::string container = path.substr(0, path.find('/'));
    if (auto retry = RetryableOutcome(response.status, code)) return *retry;
    switch (response.status) {
      case 403:
        throw PermissionError(Uri(container) + ": the store refused to " + doing + " " +
                              Uri(path) + " (" + code + "); check " + Credential(settings_) +
                              " and that it may write there (an identity needs a role such as "
                              "Storage Blob Data Contributor)");
      case 404:
        throw ConfigError(Uri(container) + ": " + code + " (does the container exist?)");
      default:
        throw SourceError(Uri(path) + ": " + doing + " failed: " + code);
    }
  }

  AzureSettings settings_;
  std::unique_ptr<BearerTokenSource> tokens_;  // with an identity only
};

OpenedStores& AzureStores() {
  static OpenedStores* stores = new OpenedStores;
  return *stores;
}

// Opens and checks the container of `location` (OpenAzureStore's first use of it).
std::shared_ptr<FileSystem> OpenContainer(const std::string& uri, const AzureLocation& location,
                                          const std::string& root, AzureSettings settings,
                                          const std::string& where) {
  arrow::fs::AzureOptions options;
  options.account_name = settings.account;
  const std::string scheme = settings.endpoint.tls ? "https" : "http";
  options.blob_storage_scheme = options.dfs_storage_scheme = scheme;
  if (settings.path_style) {
    options.blob_storage_authority = options.dfs_storage_authority =
        settings.endpoint.HostHeader();
  } else {
    const std::string suffix = settings.endpoint.HostHeader().substr(
        settings.account.size() + std::string(".blob").size());
    options.blob_storage_authority = ".blob" + suffix;
    options.dfs_storage_authority = ".dfs" + suffix;
  }
  CheckProxyFor(settings.endpoint);  // before Arrow's first request
  // An identity's token is fetched first, so that a refusal is this one clear error rather than
  // the one Arrow's own fetch would give.
  std::unique_ptr<BearerTokenSource> tokens;
  if (settings.identity) {
    tokens = AzureIdentityTokens(*settings.identity);
    (void)tokens->Token();
  }
  arrow::Status configured;
  if (!settings.identity) {
    configured = settings.sas.empty() ? options.ConfigureAccountKeyCredential(Base64Encode(settings.key))
                                      : options.ConfigureSASCredential("?" + settings.sas);
  } else if (settings.identity->kind == AzureIdentity::Kind::kClientSecret) {
    configured = options.ConfigureClientSecretCredential(
        settings.identity->tenant_id, settings.identity->client_id, settings.identity->client_secret);
  } else if (settings.identity->kind == AzureIdentity::Kind::kWorkloadIdentity) {
    configured = options.ConfigureWorkloadIdentityCredential();  // the same variables, read by Azure's library
  } else {
    configured = options.ConfigureManagedIdentityCredential(settings.identity->client_id);
  }
  if (!configured.ok()) ThrowStoreError(configured, "cannot configure " + where);
  auto made = arrow::fs::AzureFileSystem::Make(options);
  if (!made.ok()) ThrowStoreError(made.status(), "cannot open " + where);
  auto container = (*made)->GetFileInfo(location.container);
  if (!container.ok()) ThrowStoreError(container.status(), "cannot reach " + where);
  if (container->type() == arrow::fs::FileType::NotFound) {
    throw ConfigError(where + " does not exist; create it, or correct the URI " + uri);
  }
  return CheckedObjectStore("az", *made,
                            std::make_unique<AzureObjectRequests>(std::move(settings), std::move(tokens)),
                            root, where, "If-None-Match: *");
}

}  // namespace

AzureLocation ParseAzureUri(const std::string& uri) {
  AzureLocation location;
  std::string rest;
  if (uri.rfind("abfss://", 0) == 0) {
    rest = uri.substr(8);
    const auto at = rest.find('@');
    const auto slash = rest.find('/');
    if (at == std::string::npos || (slash != std::string::npos && at > slash)) {
      throw ConfigError("Azure URI " + uri + " names no container; write "
                        "abfss://container@account.dfs.core.windows.net/path");
    }
    location.container = rest.substr(0, at);
    const std::string host = rest.substr(at + 1, slash == std::string::npos ? std::string::npos
                                                                            : slash - at - 1);
    const auto dot = host.find('.');
    const std::string service = dot == std::string::npos ? "" : host.substr(dot + 1, 4);
    if (dot == std::string::npos || (service != "dfs." && service != "blob")) {
      throw ConfigError("Azure URI " + uri + ": the host must be <account>.dfs.core.windows.net "
                        "(or .blob., or another cloud's suffix)");
    }
    location.account = host.substr(0, dot);
    location.endpoint_suffix = host.substr(dot + 1 + (service == "dfs." ? 4 : 5));
    if (!ValidAccountName(location.account) || location.endpoint_suffix.empty()) {
      throw ConfigError("Azure URI " + uri + ": '" + location.account +
                        "' is not a storage account name (3 to 24 lower-case letters and digits)");
    }
    rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
  } else if (uri.rfind("az://", 0) == 0) {
    rest = uri.substr(5);
    const auto slash = rest.find('/');
    location.container = rest.substr(0, slash);
    rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
  } else {
    throw ConfigError("'" + uri + "' is not an abfss:// or az:// URI");
  }
  if (uri.find_first_of("?#") != std::string::npos) {
    throw ConfigError("Azure URI " + uri + " has a query or fragment; credentials and options "
                      "are read from the environment, not the URI");
  }
  if (!ValidContainerName(location.container)) {
    throw ConfigError("Azure URI " + uri + ": '" + location.container +
                      "' is not a container name (3 to 63 lower-case letters, digits and "
                      "single '-', starting and ending with a letter or digit)");
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find("//") != std::string::npos || (!rest.empty() && rest.front() == '/')) {
    throw ConfigError("Azure URI " + uri + " has an empty path segment ('//')");
  }
  location.path = rest;
  return location;
}

std::map<std::string, std::string> ParseAzureConnectionString(const std::string& text) {
  std::map<std::string, std::string> parts;
  std::size_t at = 0;
  int position = 0;
  while (at < text.size()) {
    auto end = text.find(';', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    ++position;
    if (!part.empty()) {
      const auto equals = part.find('=');
      if (equals == std::string::npos || equals == 0) {
        throw ConfigError("AZURE_STORAGE_CONNECTION_STRING: part " + std::to_string(position) +
                          " is not Name=value");
      }
      parts[part.substr(0, equals)] = part.substr(equals + 1);
    }
    at = end + 1;
  }
  return parts;
}

std::pair<std::shared_ptr<FileSystem>, std::string> OpenAzureStore(const std::string& uri) {
  const AzureLocation location = ParseAzureUri(uri);
  const std::string root =
      location.path.empty() ? location.container : location.container + "/" + location.path;
  AzureSettings settings = ReadSettings(location, uri);
  const std::string where = "container '" + location.container + "' of account '" +
                            settings.account + "' at " + (settings.endpoint.tls ? "https://" : "http://") +
                            settings.endpoint.HostHeader();
  const std::string cache_key = settings.endpoint.HostHeader() + "|" + settings.account + "|" +
                                location.container;
  auto fs = AzureStores().Get(cache_key, [&] {
    return OpenContainer(uri, location, root, std::move(settings), where);
  });
  return {fs, root};
}

void ReleaseAzureStores() { AzureStores().Clear(); }

}  // namespace mssql_cdc::storage
