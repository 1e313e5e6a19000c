#include "storage/gcs_store.h"

#include <arrow/filesystem/gcsfs.h>

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "storage/bucket_uri.h"
#include "storage/conditional_write_probe.h"
#include "storage/environment.h"
#include "storage/gcs_list_response.h"
#include "storage/google_credentials.h"
#include "storage/http_client.h"
#include "storage/http_proxy.h"
#include "storage/object_requests.h"
#include "storage/opened_stores.h"
#include "storage/store_errors.h"

namespace mssql_cdc::storage {
namespace {

// Arrow's GCS client retries for 15 minutes by default; a run should say what is wrong sooner.
constexpr double kArrowRetrySeconds = 60;

bool ValidBucketName(const std::string& name) {
  if (name.size() < 3 || name.size() > 222) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(name.front()) && alnum(name.back()) &&
         (name.find('.') != std::string::npos || name.size() <= 63);
}

struct GcsSettings {
  HttpEndpoint endpoint;
  bool emulator = false;
  std::string endpoint_source;  // the variable an emulator's address came from
};

GcsSettings ReadSettings() {
  GcsSettings settings;
  settings.endpoint.host = "storage.googleapis.com";
  std::string host = EnvironmentVariable("STORAGE_EMULATOR_HOST");
  std::string arrow_host = EnvironmentVariable("CLOUD_STORAGE_EMULATOR_ENDPOINT");
  auto with_scheme = [](std::string text) {
    while (!text.empty() && text.back() == '/') text.pop_back();
    return text.find("://") == std::string::npos ? "http://" + text : text;
  };
  if (!host.empty() && !arrow_host.empty() && with_scheme(host) != with_scheme(arrow_host)) {
    throw ConfigError("STORAGE_EMULATOR_HOST and CLOUD_STORAGE_EMULATOR_ENDPOINT name different "
                      "emulators; set one, or both to the same address");
  }
  settings.endpoint_source = host.empty() ? "CLOUD_STORAGE_EMULATOR_ENDPOINT" : "STORAGE_EMULATOR_HOST";
  if (host.empty()) host = arrow_host;
  if (!host.empty()) {
    settings.endpoint = ParseHttpEndpoint(with_scheme(host), settings.endpoint_source);
    settings.emulator = true;
  }
  return settings;
}

// The JSON API's error message ("No such object: b/o"), or the status number.
std::string ErrorMessage(const HttpResponse& response) {
  const auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error") && json["error"].is_object()) {
    const auto& error = json["error"];
    if (error.contains("message") && error["message"].is_string()) {
      return error["message"].get<std::string>();
    }
  }
  return "HTTP " + std::to_string(response.status);
}

// Uploads (with ifGenerationMatch=0 for a commit), downloads, deletes and lists over the JSON
// API, with a bearer token unless the store is an emulator.
class GcsObjectRequests final : public ObjectRequests {
 public:
  GcsObjectRequests(GcsSettings settings, std::unique_ptr<BearerTokenSource> tokens)
      : settings_(std::move(settings)), tokens_(std::move(tokens)) {}

  PutResult PutIfAbsent(const std::string& path, const std::string& contents) override {
    return Upload(path, contents, /*if_absent=*/true);
  }

  PutResult Put(const std::string& path, const std::string& contents) override {
    return Upload(path, contents, /*if_absent=*/false);
  }

  PutResult Delete(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("DELETE", ObjectTarget(path), "", response)) return *failed;
    if (response.status == 200 || response.status == 204 || response.status == 404) {
      return {PutOutcome::kCreated, ""};
    }
    return Otherwise(response, path, "delete");
  }

  std::optional<std::string> Get(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("GET", ObjectTarget(path) + "?alt=media", "", response)) {
      throw SourceError(Uri(path) + ": " + failed->detail);
    }
    if (response.status == 200) return std::move(response.body);
    if (response.status == 404) return std::nullopt;
    const PutResult other = Otherwise(response, path, "read");
    throw SourceError(Uri(path) + ": reading failed (" + other.detail + ")");
  }

  std::vector<FileInfo> ListAfter(const std::string& directory,
                                  const std::string& after) override {
    const auto [bucket, prefix] = BucketAndPrefix(directory);
    // startOffset includes the name itself.
    return CollectListing(
        [&](const std::string& token) {
          std::string target = "/storage/v1/b/" + PercentEncode(bucket, false) +
                               "/o?delimiter=%2F&prefix=" + PercentEncode(prefix, false) +
                               "&startOffset=" + PercentEncode(prefix + after, false);
          if (!token.empty()) target += "&pageToken=" + PercentEncode(token, false);
          HttpResponse response;
          if (auto failed = Send("GET", target, "", response)) {
            throw SourceError(Uri(directory) + ": listing failed (" + failed->detail + ")");
          }
          if (response.status != 200) {
            const PutResult other = Otherwise(response, directory, "list");
            throw SourceError(Uri(directory) + ": listing failed (" + other.detail + ")");
          }
          return ParseGcsObjectList(response.body, prefix);
        },
        after);
  }

  // Whether the bucket exists: ConfigError when it does not, PermissionError when the
  // credentials may not read it.
  void CheckBucket(const std::string& bucket, const std::string& where) {
    HttpResponse response;
    if (auto failed = Send("GET", "/storage/v1/b/" + PercentEncode(bucket, false), "", response)) {
      throw SourceError("cannot reach " + where + ": " + failed->detail);
    }
    if (response.status == 404) {
      throw ConfigError("bucket '" + bucket + "' does not exist (" + where +
                        "); create it, or correct the URI");
    }
    if (response.status != 200) {
      const PutResult other = Otherwise(response, bucket, "read");
      throw SourceError("cannot read " + where + " (" + other.detail + "); try again when the "
                        "store answers");
    }
  }

 private:
  static std::string Uri(const std::string& path) { return "gs://" + path; }

  static std::string ObjectTarget(const std::string& path) {
    const auto slash = path.find('/');
    return "/storage/v1/b/" + PercentEncode(path.substr(0, slash), false) + "/o/" +
           PercentEncode(slash == std::string::npos ? "" : path.substr(slash + 1), false);
  }

  PutResult Upload(const std::string& path, const std::string& contents, bool if_absent) {
    const auto slash = path.find('/');
    std::string target = "/upload/storage/v1/b/" + PercentEncode(path.substr(0, slash), false) +
                         "/o?uploadType=media&name=" +
                         PercentEncode(slash == std::string::npos ? "" : path.substr(slash + 1), false);
    if (if_absent) target += "&ifGenerationMatch=0";
    HttpResponse response;
    if (auto failed = Send("POST", target, contents, response)) return *failed;
    if (response.status == 200) return {PutOutcome::kCreated, ""};
    if (if_absent && response.status == 412) return {PutOutcome::kExists, ErrorMessage(response)};
    return Otherwise(response, path, "create");
  }

  std::optional<PutResult> Send(const std::string& method, const std::string& target,
                                const std::string& body, HttpResponse& response) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    if (method == "POST") request.headers.emplace_back("Content-Type", "application/octet-stream");
    if (tokens_) request.headers.emplace_back("Authorization", "Bearer " + tokens_->Token());
    request.body = body;
    return SendObjectRequest(settings_.endpoint, request, response);
  }

  PutResult Otherwise(const HttpResponse& response, const std::string& path,
                      const std::string& doing) {
    const std::string message = ErrorMessage(response);
    if (auto retry = RetryableOutcome(response.status, message)) return *retry;
    const std::string bucket = path.substr(0, path.find('/'));
    switch (response.status) {
      case 401:
      case 403:
        throw PermissionError(Uri(bucket) + ": the store refused to " + doing + " " + Uri(path) +
                              " (" + message + "); check the credentials and that they may "
                              "write there");
      case 404:
        throw ConfigError(Uri(bucket) + ": " + message + " (does the bucket exist?)");
      default:
        throw SourceError(Uri(path) + ": " + doing + " failed: " + message);
    }
  }

  GcsSettings settings_;
  std::unique_ptr<BearerTokenSource> tokens_;
};

OpenedStores& GcsStores() {
  static OpenedStores* stores = new OpenedStores;
  return *stores;
}

// Opens and checks the bucket of `location` (OpenGcsStore's first use of it).
std::shared_ptr<FileSystem> OpenBucket(const GcsLocation& location, const std::string& root,
                                       const GcsSettings& settings, const std::string& where) {
  CheckProxyFor(settings.endpoint);  // before Arrow's first request
  std::unique_ptr<BearerTokenSource> tokens;
  arrow::fs::GcsOptions options;
  if (settings.emulator) {
    options = arrow::fs::GcsOptions::Anonymous();
    options.endpoint_override = settings.endpoint.HostHeader();
    options.scheme = settings.endpoint.tls ? "https" : "http";
  } else {
    tokens = FindGoogleCredentials(/*metadata_server=*/true);
    try {
      (void)tokens->Token();
    } catch (const SourceError& e) {
      throw PermissionError(
          "no Google credentials were found for " + where + " (" + e.what() +
          "): set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run `gcloud "
          "auth application-default login`, or run where a metadata server gives a service "
          "account");
    }
    options = arrow::fs::GcsOptions::Defaults();
  }
  options.retry_limit_seconds = kArrowRetrySeconds;
  auto made = arrow::fs::GcsFileSystem::Make(options);
  if (!made.ok()) ThrowStoreError(made.status(), "cannot open " + where);
  auto requests = std::make_unique<GcsObjectRequests>(settings, std::move(tokens));
  requests->CheckBucket(location.bucket, where);
  return CheckedObjectStore("gs", *made, std::move(requests), root, where, "ifGenerationMatch=0");
}

}  // namespace

GcsLocation ParseGcsUri(const std::string& uri) {
  if (uri.rfind("gs://", 0) != 0) throw ConfigError("'" + uri + "' is not a gs:// URI");
  const BucketUri parts = SplitBucketUri(uri, uri.substr(5), "GCS", "gs://bucket/path");
  if (!ValidBucketName(parts.bucket)) {
    throw ConfigError("GCS URI " + uri + ": '" + parts.bucket +
                      "' is not a bucket name (3 to 63 lower-case letters, digits, '-', '_' "
                      "and '.', starting and ending with a letter or digit)");
  }
  return {parts.bucket, parts.path};
}

std::pair<std::shared_ptr<FileSystem>, std::string> OpenGcsStore(const std::string& uri) {
  const GcsLocation location = ParseGcsUri(uri);
  const std::string root =
      location.path.empty() ? location.bucket : location.bucket + "/" + location.path;
  GcsSettings settings = ReadSettings();
  std::string where = "gs://" + location.bucket;
  if (settings.emulator) {
    where += " at " + std::string(settings.endpoint.tls ? "https://" : "http://") +
             settings.endpoint.HostHeader() + " (" + settings.endpoint_source + ")";
  }
  const std::string cache_key = settings.endpoint.HostHeader() + "|" + location.bucket;
  auto fs = GcsStores().Get(cache_key, [&] { return OpenBucket(location, root, settings, where); });
  return {fs, root};
}

void ReleaseGcsStores() { GcsStores().Clear(); }

}  // namespace mssql_cdc::storage
