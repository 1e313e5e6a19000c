#include "storage/google_credentials.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "storage/azure_signature.h"
#include "storage/http_client.h"

namespace mssql_cdc::storage {
namespace {

constexpr std::chrono::milliseconds kTokenTimeout{30'000};
constexpr const char* kScope = "https://www.googleapis.com/auth/devstorage.read_write";
constexpr const char* kDefaultTokenUri = "https://oauth2.googleapis.com/token";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string Base64Url(const std::string& bytes) {
  std::string text = Base64Encode(bytes);
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

struct TokenAnswer {
  std::string token;
  std::chrono::seconds lifetime;
};

// Reads {"access_token", "expires_in"} from a token endpoint's answer to `request` at `url`.
TokenAnswer RequestToken(const std::string& url, HttpRequest request, const std::string& whose) {
  auto [endpoint, path] = ParseHttpUrl(url, "the token endpoint of " + whose);
  request.target = path;
  HttpResponse response;
  try {
    response = SendHttpRequest(endpoint, request, kTokenTimeout);
  } catch (const HttpTransportError& e) {
    throw SourceError("cannot reach the token endpoint of " + whose + ": " + e.what());
  }
  const auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (response.status != 200) {
    std::string reason = "HTTP " + std::to_string(response.status);
    if (json.is_object() && json.contains("error")) {
      const auto& error = json["error"];
      reason = error.is_string() ? error.get<std::string>() : error.dump();
      if (json.contains("error_description") && json["error_description"].is_string()) {
        reason += ": " + json["error_description"].get<std::string>();
      }
    }
    const std::string message = "the token endpoint refused " + whose + " (" + reason + ")";
    if (response.status == 400 || response.status == 401 || response.status == 403) {
      throw PermissionError(message + "; check the credentials");
    }
    throw SourceError(message);
  }
  if (!json.is_object() || !json.contains("access_token") || !json["access_token"].is_string()) {
    throw SourceError("the token endpoint of " + whose + " answered without an access_token");
  }
  TokenAnswer answer{json["access_token"].get<std::string>(), std::chrono::seconds(3600)};
  if (json.contains("expires_in") && json["expires_in"].is_number_integer()) {
    answer.lifetime = std::chrono::seconds(json["expires_in"].get<std::int64_t>());
  }
  return answer;
}

HttpRequest FormPost(const std::string& body) {
  HttpRequest request;
  request.method = "POST";
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  request.body = body;
  return request;
}

std::string StringField(const nlohmann::json& json, const char* name, const std::string& origin) {
  if (!json.contains(name) || !json[name].is_string() || json[name].get<std::string>().empty()) {
    throw ConfigError(origin + " has no " + name + "; download the credentials file again");
  }
  return json[name].get<std::string>();
}

class ServiceAccount final : public GoogleTokenSource {
 public:
  ServiceAccount(const nlohmann::json& key, std::string origin) : origin_(std::move(origin)) {
    email_ = StringField(key, "client_email", origin_);
    private_key_ = StringField(key, "private_key", origin_);
    token_uri_ = key.contains("token_uri") && key["token_uri"].is_string()
                     ? key["token_uri"].get<std::string>()
                     : kDefaultTokenUri;
    // A key that does not read fails here, before anything is written.
    (void)SignJwtRs256("{}", "{}", private_key_);
  }
  std::string Describe() const override {
    return "the service account " + email_ + " (" + origin_ + ")";
  }

 protected:
  Fetched Fetch() override {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
    const nlohmann::json claims = {{"iss", email_}, {"scope", kScope}, {"aud", token_uri_},
                                   {"iat", now}, {"exp", now + 3600}};
    const std::string assertion = SignJwtRs256(header.dump(), claims.dump(), private_key_);
    auto answer = RequestToken(
        token_uri_,
        FormPost("grant_type=" + PercentEncode("urn:ietf:params:oauth:grant-type:jwt-bearer", false) +
                 "&assertion=" + assertion),
        Describe());
    return {answer.token, answer.lifetime};
  }

 private:
  std::string origin_, email_, private_key_, token_uri_;
};

class AuthorizedUser final : public GoogleTokenSource {
 public:
  AuthorizedUser(const nlohmann::json& file, std::string origin) : origin_(std::move(origin)) {
    client_id_ = StringField(file, "client_id", origin_);
    client_secret_ = StringField(file, "client_secret", origin_);
    refresh_token_ = StringField(file, "refresh_token", origin_);
  }
  std::string Describe() const override { return "the user credentials of " + origin_; }

 protected:
  Fetched Fetch() override {
    auto answer = RequestToken(
        kDefaultTokenUri,
        FormPost("grant_type=refresh_token&client_id=" + PercentEncode(client_id_, false) +
                 "&client_secret=" + PercentEncode(client_secret_, false) +
                 "&refresh_token=" + PercentEncode(refresh_token_, false)),
        Describe());
    return {answer.token, answer.lifetime};
  }

 private:
  std::string origin_, client_id_, client_secret_, refresh_token_;
};

class MetadataServer final : public GoogleTokenSource {
 public:
  explicit MetadataServer(std::string host) : host_(std::move(host)) {}
  std::string Describe() const override {
    return "the metadata server's default service account (" + host_ + ")";
  }

 protected:
  Fetched Fetch() override {
    HttpRequest request;
    request.method = "GET";
    request.headers = {{"Metadata-Flavor", "Google"}};
    auto answer = RequestToken(
        "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default/token",
        request, Describe());
    return {answer.token, answer.lifetime};
  }

 private:
  std::string host_;
};

}  // namespace

std::string GoogleTokenSource::Token() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (token_.empty() || now >= refresh_at_) {
    Fetched fetched = Fetch();
    token_ = std::move(fetched.token);
    refresh_at_ = now + std::max(fetched.lifetime - std::chrono::seconds(300), fetched.lifetime / 2);
  }
  return token_;
}

std::string SignJwtRs256(const std::string& header_json, const std::string& claims_json,
                         const std::string& private_key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
      EVP_PKEY_free);
  if (!key) throw ConfigError("the service account's private_key is not a PEM private key");
  const std::string signing_input = Base64Url(header_json) + "." + Base64Url(claims_json);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  EVP_MD_CTX_free);
  std::size_t size = 0;
  if (!context || EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    throw ConfigError("the service account's private_key cannot sign (is it an RSA key?)");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    throw ConfigError("the service account's private_key cannot sign (is it an RSA key?)");
  }
  signature.resize(size);
  return signing_input + "." + Base64Url(signature);
}

std::unique_ptr<GoogleTokenSource> ServiceAccountTokenSource(const std::string& json,
                                                             const std::string& origin) {
  const auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) throw ConfigError(origin + " is not a JSON object");
  return std::make_unique<ServiceAccount>(parsed, origin);
}

std::unique_ptr<GoogleTokenSource> FindGoogleCredentials(bool metadata_server) {
  std::string path = Env("GOOGLE_APPLICATION_CREDENTIALS");
  std::string origin = "GOOGLE_APPLICATION_CREDENTIALS=" + path;
  if (path.empty()) {
    std::string config = Env("CLOUDSDK_CONFIG");
    if (config.empty() && !Env("HOME").empty()) config = Env("HOME") + "/.config/gcloud";
    const std::string well_known = config + "/application_default_credentials.json";
    if (!config.empty() && std::filesystem::exists(well_known)) {
      path = well_known;
      origin = well_known;
    }
  }
  if (path.empty()) {
    if (!metadata_server) return nullptr;
    std::string host = Env("GCE_METADATA_HOST");
    return std::make_unique<MetadataServer>(host.empty() ? "metadata.google.internal" : host);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(origin + " cannot be read; give the path of a credentials file");
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("type") || !json["type"].is_string()) {
    throw ConfigError(origin + " is not a Google credentials file (a JSON object with a type)");
  }
  const std::string type = json["type"].get<std::string>();
  if (type == "service_account") return std::make_unique<ServiceAccount>(json, origin);
  if (type == "authorized_user") return std::make_unique<AuthorizedUser>(json, origin);
  throw ConfigError(origin + " holds credentials of type '" + type +
                    "', which the engine does not take; use a service account key, gcloud's "
                    "application-default login, or the metadata server of a VM or GKE pod");
}

}  // namespace mssql_cdc::storage
