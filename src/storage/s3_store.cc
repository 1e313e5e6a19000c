#include "storage/s3_store.h"

#include <arrow/filesystem/s3fs.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>

#include "core/errors.h"
#include "storage/aws_signature.h"
#include "storage/bucket_uri.h"
#include "storage/conditional_write_probe.h"
#include "storage/environment.h"
#include "storage/object_requests.h"
#include "storage/http_client.h"
#include "storage/http_proxy.h"
#include "storage/opened_stores.h"
#include "storage/s3_list_response.h"
#include "storage/store_errors.h"
#include "storage/xml_text.h"

namespace mssql_cdc::storage {
namespace {


// The S3 error code inside an XML error body ("PreconditionFailed"), or the status number.
std::string S3ErrorCode(const HttpResponse& response) {
  if (std::string code = XmlText(response.body, "Code"); !code.empty()) return code;
  return "HTTP " + std::to_string(response.status);
}

PermissionError NoCredentials(const std::string& bucket) {
  return PermissionError(
      "no AWS credentials were found for s3://" + bucket +
      ": set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, name a profile with AWS_PROFILE, or "
      "run where an instance, container or web-identity role is available");
}

struct S3Settings {
  std::optional<HttpEndpoint> endpoint;  // an S3-compatible store; nullopt for AWS
  std::string endpoint_source;           // the variable it came from, for messages
  std::string region;
};

S3Settings ReadSettings() {
  S3Settings settings;
  for (const char* name : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    if (std::string url = EnvironmentVariable(name); !url.empty()) {
      settings.endpoint = ParseHttpEndpoint(url, name);
      settings.endpoint_source = name;
      break;
    }
  }
  settings.region = EnvironmentVariable("AWS_REGION");
  if (settings.region.empty()) settings.region = EnvironmentVariable("AWS_DEFAULT_REGION");
  return settings;
}

// PutObject with If-None-Match: * and DeleteObject, signed with the SDK's current keys.
class S3ObjectRequests final : public ObjectRequests {
 public:
  S3ObjectRequests(arrow::fs::S3Options options, S3Settings settings, std::string region)
      : options_(std::move(options)), settings_(std::move(settings)), region_(std::move(region)) {}

  PutResult PutIfAbsent(const std::string& path, const std::string& contents) override {
    HttpResponse response;
    if (auto failed = Send("PUT", path, contents, response, /*if_absent=*/true)) return *failed;
    switch (response.status) {
      case 200:
        return {PutOutcome::kCreated, ""};
      case 412:
        return {PutOutcome::kExists, S3ErrorCode(response)};
      case 501:
        throw ConfigError("s3://" + BucketOf(path) + " does not support conditional writes (" +
                          S3ErrorCode(response) + "); Delta commits need If-None-Match: * to "
                          "be atomic");
      default:
        return Otherwise(response, path, "create");
    }
  }

  PutResult Put(const std::string& path, const std::string& contents) override {
    HttpResponse response;
    if (auto failed = Send("PUT", path, contents, response)) return *failed;
    if (response.status == 200) return {PutOutcome::kCreated, ""};
    return Otherwise(response, path, "write");
  }

  PutResult Delete(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("DELETE", path, "", response)) return *failed;
    const bool gone = response.status == 200 || response.status == 204 ||
                      (response.status == 404 && S3ErrorCode(response) != "NoSuchBucket");
    if (gone) return {PutOutcome::kCreated, ""};
    return Otherwise(response, path, "delete");
  }

  std::vector<FileInfo> ListAfter(const std::string& directory,
                                  const std::string& after) override {
    const auto [bucket, prefix] = BucketAndPrefix(directory);
    return CollectListing(
        [&](const std::string& token) {
          // Parameters in the sorted order SigV4's canonical query wants them.
          std::string query;
          if (!token.empty()) query += "continuation-token=" + AwsEncodeQueryValue(token) + "&";
          query += "delimiter=%2F&list-type=2&prefix=" + AwsEncodeQueryValue(prefix) +
                   "&start-after=" + AwsEncodeQueryValue(prefix + after);
          HttpResponse response;
          if (auto failed = SendTo("GET", bucket, "", query, "", response)) {
            throw SourceError("s3://" + directory + ": listing failed (" + failed->detail + ")");
          }
          if (response.status != 200) {
            const PutResult other = Otherwise(response, directory, "list");
            throw SourceError("s3://" + directory + ": listing failed (" + other.detail + ")");
          }
          return ParseListObjectsV2(response.body, prefix);
        },
        after);
  }

  std::optional<std::string> Get(const std::string& path) override {
    HttpResponse response;
    if (auto failed = Send("GET", path, "", response)) {
      throw SourceError("s3://" + path + ": " + failed->detail);
    }
    if (response.status == 200) return std::move(response.body);
    if (response.status == 404 && S3ErrorCode(response) == "NoSuchKey") return std::nullopt;
    const PutResult other = Otherwise(response, path, "read");
    throw SourceError("s3://" + path + ": reading failed (" + other.detail + ")");
  }

 private:
  static std::string BucketOf(const std::string& path) { return path.substr(0, path.find('/')); }

  // Sends one signed request for the object at `path`; the outcome when no response came.
  std::optional<PutResult> Send(const std::string& method, const std::string& path,
                                const std::string& body, HttpResponse& response,
                                bool if_absent = false) {
    const auto slash = path.find('/');
    const std::string bucket = path.substr(0, slash);
    const std::string key = slash == std::string::npos ? "" : path.substr(slash + 1);
    return SendTo(method, bucket, key, "", body, response, if_absent);
  }

  // Sends one signed request for `key` in `bucket` (the bucket itself when empty), with
  // `query` already encoded; the outcome when no response came.
  std::optional<PutResult> SendTo(const std::string& method, const std::string& bucket,
                                  const std::string& key, const std::string& query,
                                  const std::string& body, HttpResponse& response,
                                  bool if_absent = false) {
    HttpEndpoint endpoint;
    HttpRequest request;
    request.method = method;
    const std::string key_path = key.empty() ? "" : "/" + S3EncodeKey(key);
    if (settings_.endpoint) {
      endpoint = *settings_.endpoint;
      request.target = "/" + bucket + key_path;
    } else if (bucket.find('.') != std::string::npos) {
      // A dotted bucket name breaks the certificate's wildcard as a host name: path-style.
      endpoint.host = "s3." + region_ + ".amazonaws.com";
      request.target = "/" + bucket + key_path;
    } else {
      endpoint.host = bucket + ".s3." + region_ + ".amazonaws.com";
      request.target = key_path.empty() ? "/" : key_path;
    }
    if (!query.empty()) request.target += "?" + query;
    if (method == "PUT") {
      request.headers = {{"Content-Type", "application/octet-stream"}};
      if (if_absent) request.headers.emplace_back("If-None-Match", "*");
      request.body = body;
    }
    AwsCredentials credentials{options_.GetAccessKey(), options_.GetSecretKey(),
                               options_.GetSessionToken()};
    if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
      throw NoCredentials(bucket);
    }
    SignAwsRequest(request, endpoint.HostHeader(), region_, "s3", credentials,
                   std::chrono::system_clock::now());
    return SendObjectRequest(endpoint, request, response);
  }

  // The answers both requests share: throttling and server errors to retry, and refusals.
  PutResult Otherwise(const HttpResponse& response, const std::string& path,
                      const std::string& doing) {
    const std::string code = S3ErrorCode(response);
    const std::string bucket = BucketOf(path);
    const std::string key = path.size() > bucket.size() ? path.substr(bucket.size() + 1) : "";
    if (auto retry = RetryableOutcome(response.status, code)) return *retry;
    switch (response.status) {
      case 403:
        throw PermissionError("s3://" + bucket + ": the store refused to " + doing + " " + key +
                              " (" + code + "); check the credentials and that they may write "
                              "there");
      case 404:
        throw ConfigError("s3://" + bucket + ": " + code + " (does the bucket exist?)");
      default:
        throw SourceError("s3://" + bucket + ": " + doing + " " + key + " failed: " + code);
    }
  }

  arrow::fs::S3Options options_;
  S3Settings settings_;
  std::string region_;
};

bool ValidBucketName(const std::string& name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return name.front() != '-' && name.front() != '.' && name.back() != '-' && name.back() != '.';
}

// Never destroyed: a process that does not call ReleaseS3Stores (a Python process, whose
// pyarrow shuts the AWS SDK down itself) must not destroy S3 clients after that.
OpenedStores& S3Stores() {
  static OpenedStores* stores = new OpenedStores;
  return *stores;
}

std::atomic<bool> s3_initialized{false};

// Opens and checks the bucket of `location` (OpenS3Store's first use of it).
std::shared_ptr<FileSystem> OpenBucket(const std::string& uri, const S3Location& location,
                                       const std::string& root, const S3Settings& settings) {
  if (!s3_initialized) {
    auto status = arrow::fs::EnsureS3Initialized();
    if (!status.ok()) throw SourceError("cannot start Arrow's S3 support: " + status.ToString());
    s3_initialized = true;
  }

  arrow::fs::S3Options options = arrow::fs::S3Options::Defaults();
  std::string where = "s3://" + location.bucket;
  if (settings.endpoint) {
    options.endpoint_override = settings.endpoint->HostHeader();
    options.scheme = settings.endpoint->tls ? "https" : "http";
    where += " at " + std::string(settings.endpoint->tls ? "https://" : "http://") +
             settings.endpoint->HostHeader() + " (" + settings.endpoint_source + ")";
  }
  std::string region = settings.region;
  // Arrow's S3 client reads no proxy variable: it is given the one the engine's requests take.
  HttpEndpoint arrow_endpoint;
  arrow_endpoint.host = location.bucket + ".s3." + (region.empty() ? "us-east-1" : region) + ".amazonaws.com";
  const auto proxy = ProxyFor(settings.endpoint ? *settings.endpoint : arrow_endpoint);
  if (proxy) {
    if (region.empty() && !settings.endpoint) {
      throw ConfigError("s3://" + location.bucket + " is reached through " + proxy->Describe() +
                        ", which the question for the bucket's region cannot take; set AWS_REGION");
    }
    options.proxy_options.scheme = "http";
    options.proxy_options.host = proxy->endpoint.host;
    options.proxy_options.port = proxy->endpoint.port;
    options.proxy_options.username = proxy->username;
    options.proxy_options.password = proxy->password;
    CheckProxyFor(settings.endpoint ? *settings.endpoint : arrow_endpoint);
  }
  if (region.empty() && !settings.endpoint) {
    auto resolved = arrow::fs::ResolveS3BucketRegion(location.bucket);
    if (resolved.ok()) region = *resolved;
  }
  if (!region.empty()) options.region = region;
  auto made = arrow::fs::S3FileSystem::Make(options);
  if (!made.ok()) ThrowStoreError(made.status(), "cannot open " + where);
  if (region.empty()) region = (*made)->region();
  if (region.empty()) region = "us-east-1";

  if (options.GetAccessKey().empty() || options.GetSecretKey().empty()) {
    throw NoCredentials(location.bucket);
  }
  auto bucket = (*made)->GetFileInfo(location.bucket);
  if (!bucket.ok()) ThrowStoreError(bucket.status(), "cannot reach " + where);
  if (bucket->type() == arrow::fs::FileType::NotFound) {
    throw ConfigError("bucket '" + location.bucket + "' does not exist (" + where +
                      "); create it, or correct the URI " + uri);
  }
  return CheckedObjectStore("s3", *made,
                            std::make_unique<S3ObjectRequests>(options, settings, region), root,
                            where + " (region " + region + ")", "If-None-Match: *");
}

}  // namespace

S3Location ParseS3Uri(const std::string& uri) {
  std::string rest;
  if (uri.rfind("s3://", 0) == 0) {
    rest = uri.substr(5);
  } else if (uri.rfind("s3a://", 0) == 0) {
    rest = uri.substr(6);
  } else {
    throw ConfigError("'" + uri + "' is not an s3:// URI");
  }
  const BucketUri parts = SplitBucketUri(uri, rest, "S3", "s3://bucket/path");
  if (!ValidBucketName(parts.bucket)) {
    throw ConfigError("S3 URI " + uri + ": '" + parts.bucket +
                      "' is not a bucket name (3 to 63 lower-case letters, digits, '-' and "
                      "'.', starting and ending with a letter or digit)");
  }
  return {parts.bucket, parts.path};
}

std::pair<std::shared_ptr<FileSystem>, std::string> OpenS3Store(const std::string& uri) {
  const S3Location location = ParseS3Uri(uri);
  const std::string root = location.key.empty() ? location.bucket
                                                : location.bucket + "/" + location.key;
  const S3Settings settings = ReadSettings();
  const std::string cache_key =
      (settings.endpoint ? settings.endpoint->HostHeader() : "aws") + "|" + settings.region +
      "|" + location.bucket;

  auto fs = S3Stores().Get(cache_key, [&] { return OpenBucket(uri, location, root, settings); });
  return {fs, root};
}

void ReleaseS3Stores() {
  S3Stores().Clear();
  if (s3_initialized) (void)arrow::fs::EnsureS3Finalized();
}


}  // namespace mssql_cdc::storage
