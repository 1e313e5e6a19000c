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
#include "storage/base64.h"
#include "storage/environment.h"
#include "storage/http_client.h"

namespace mssql_cdc::storage {
namespace {

constexpr const char* kScope = "https://www.googleapis.com/auth/devstorage.read_write";
constexpr const char* kDefaultTokenUri = "https://oauth2.googleapis.com/token";

std::string Base64Url(const std::string& bytes) {
  std::string text = Base64Encode(bytes);
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

std::string StringField(const nlohmann::json& json, const char* name, const std::string& origin) {
  if (!json.contains(name) || !json[name].is_string() || json[name].get<std::string>().empty()) {
    throw ConfigError(origin + " has no " + name + "; download the credentials file again");
  }
  return json[name].get<std::string>();
}

class ServiceAccount final : public BearerTokenSource {
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
    return RequestToken(
        token_uri_,
        FormPost("grant_type=" + PercentEncode("urn:ietf:params:oauth:grant-type:jwt-bearer", false) +
                 "&assertion=" + assertion),
        Describe());
  }

 private:
  std::string origin_, email_, private_key_, token_uri_;
};

class AuthorizedUser final : public BearerTokenSource {
 public:
  AuthorizedUser(const nlohmann::json& file, std::string origin) : origin_(std::move(origin)) {
    client_id_ = StringField(file, "client_id", origin_);
    client_secret_ = StringField(file, "client_secret", origin_);
    refresh_token_ = StringField(file, "refresh_token", origin_);
  }
  std::string Describe() const override { return "the user credentials of " + origin_; }

 protected:
  Fetched Fetch() override {
    return RequestToken(
        kDefaultTokenUri,
        FormPost("grant_type=refresh_token&client_id=" + PercentEncode(client_id_, false) +
                 "&client_secret=" + PercentEncode(client_secret_, false) +
                 "&refresh_token=" + PercentEncode(refresh_token_, false)),
        Describe());
  }

 private:
  std::string origin_, client_id_, client_secret_, refresh_token_;
};

class MetadataServer final : public BearerTokenSource {
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
    return RequestToken(
        "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default/token",
        request, Describe());
  }

 private:
  std::string host_;
};

}  // namespace

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

std::unique_ptr<BearerTokenSource> ServiceAccountTokenSource(const std::string& json,
                                                             const std::string& origin) {
  const auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) throw ConfigError(origin + " is not a JSON object");
  return std::make_unique<ServiceAccount>(parsed, origin);
}

std::unique_ptr<BearerTokenSource> FindGoogleCredentials(bool metadata_server) {
  std::string path = EnvironmentVariable("GOOGLE_APPLICATION_CREDENTIALS");
  std::string origin = "GOOGLE_APPLICATION_CREDENTIALS=" + path;
  if (path.empty()) {
    std::string config = EnvironmentVariable("CLOUDSDK_CONFIG");
    if (config.empty() && !EnvironmentVariable("HOME").empty()) config = EnvironmentVariable("HOME") + "/.config/gcloud";
    const std::string well_known = config + "/application_default_credentials.json";
    if (!config.empty() && std::filesystem::exists(well_known)) {
      path = well_known;
      origin = well_known;
    }
  }
  if (path.empty()) {
    if (!metadata_server) return nullptr;
    std::string host = EnvironmentVariable("GCE_METADATA_HOST");
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
