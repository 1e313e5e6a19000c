// GCS URIs, objects.list answers, and the token flows of Application Default Credentials
// against a token endpoint and a metadata server on this machine (a small HTTP server in the
// test that checks what Google's would: the JWT's RS256 signature with the key's public half,
// the metadata header). The emulator tests are in tests/storage/test_gcs_store.py.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "storage/base64.h"
#include "storage/azure_signature.h"
#include "storage/gcs_list_response.h"
#include "storage/gcs_store.h"
#include "storage/google_credentials.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::storage {
namespace {

// Answers `count` HTTP requests on 127.0.0.1 with `handler(request text)` -> {status, body}.
class LocalHttpServer {
 public:
  using Handler = std::function<std::pair<int, std::string>(const std::string&)>;
  LocalHttpServer(int count, Handler handler) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(fd_, 4);
    socklen_t size = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, count, handler] {
      for (int i = 0; i < count; ++i) {
        // A test that fails before its requests must not leave this thread waiting for them.
        pollfd waiting{fd_, POLLIN, 0};
        if (::poll(&waiting, 1, 20'000) != 1) return;
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        std::string request;
        char buffer[4096];
        std::size_t expected = std::string::npos;
        while (expected == std::string::npos || request.size() < expected) {
          const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
          if (got <= 0) break;
          request.append(buffer, static_cast<std::size_t>(got));
          const auto end = request.find("\r\n\r\n");
          if (end != std::string::npos && expected == std::string::npos) {
            std::size_t length = 0;
            const auto at = request.find("Content-Length: ");
            if (at != std::string::npos && at < end) length = std::stoul(request.substr(at + 16));
            expected = end + 4 + length;
          }
        }
        auto [status, body] = handler(request);
        const std::string response = "HTTP/1.1 " + std::to_string(status) +
                                     " X\r\nContent-Type: application/json\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
                                     body;
        ::send(client, response.data(), response.size(), 0);
        ::close(client);
      }
    });
  }
  ~LocalHttpServer() {
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

struct KeyPair {
  std::string private_pem;
  std::string public_pem;
};

KeyPair MakeRsaKey() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  auto pem = [](auto write) {
    BIO* out = BIO_new(BIO_s_mem());
    write(out);
    char* data = nullptr;
    const long size = BIO_get_mem_data(out, &data);
    std::string text(data, static_cast<std::size_t>(size));
    BIO_free(out);
    return text;
  };
  KeyPair pair;
  pair.private_pem =
      pem([&](BIO* out) { PEM_write_bio_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr); });
  pair.public_pem = pem([&](BIO* out) { PEM_write_bio_PUBKEY(out, key); });
  EVP_PKEY_free(key);
  return pair;
}

std::string FromBase64Url(std::string text) {
  for (char& c : text) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (text.size() % 4) text += '=';
  return Base64Decode(text).value_or("");
}

bool VerifiesRs256(const std::string& jwt, const std::string& public_pem) {
  const auto last_dot = jwt.rfind('.');
  const std::string input = jwt.substr(0, last_dot);
  const std::string signature = FromBase64Url(jwt.substr(last_dot + 1));
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  const bool ok =
      key && EVP_DigestVerifyInit(context, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(context, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1;
  EVP_MD_CTX_free(context);
  EVP_PKEY_free(key);
  return ok;
}

// Sets (or, with nullptr, unsets) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(GcsUri, BucketAndPath) {
  GcsLocation a = ParseGcsUri("gs://lake_1/bronze/t/");
  EXPECT_EQ(a.bucket, "lake_1");
  EXPECT_EQ(a.path, "bronze/t");
  EXPECT_EQ(ParseGcsUri("gs://my.dotted.bucket").path, "");
  for (const char* bad : {"gs://", "gs://Lake/t", "gs://-lake/t", "gs://la/t", "gs://lake//t",
                          "gs://lake/t?x=1", "gcs://lake/t"}) {
    EXPECT_THROW(ParseGcsUri(bad), ConfigError) << bad;
  }
}

TEST(GcsListResponse, ReadsItemsPrefixesAndPageTokens) {
  const std::string body = R"({"kind":"storage#objects","nextPageToken":"t/_delta_log/x",
    "prefixes":["t/_delta_log/_commits/"],
    "items":[{"name":"t/_delta_log/","size":"0"},
             {"name":"t/_delta_log/00000000000000000011.json","size":"1234",
              "updated":"2026-12-05T14:55:02.250Z"}]})";
  ListPage page = ParseGcsObjectList(body, "t/_delta_log/");
  ASSERT_EQ(page.entries.size(), 2u);
  EXPECT_EQ(page.entries[0].name, "00000000000000000011.json");
  EXPECT_EQ(page.entries[0].size, 1234);
  EXPECT_EQ(page.entries[0].modification_time_ms, 1796482502250LL);
  EXPECT_EQ(page.entries[1].name, "_commits");
  EXPECT_TRUE(page.entries[1].is_directory);
  EXPECT_EQ(page.next, "t/_delta_log/x");
  // An empty listing has no items at all.
  EXPECT_TRUE(ParseGcsObjectList(R"({"kind":"storage#objects"})", "").entries.empty());
  EXPECT_THROW(ParseGcsObjectList("Not Found", ""), SourceError);
}

TEST(GoogleCredentials, ServiceAccountJwtIsExchangedAtItsTokenUri) {
  const KeyPair key = MakeRsaKey();
  std::string assertion;
  LocalHttpServer server(1, [&](const std::string& request) -> std::pair<int, std::string> {
    const auto at = request.find("assertion=");
    if (request.rfind("POST /token HTTP/1.1", 0) != 0 || at == std::string::npos ||
        request.find("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer") ==
            std::string::npos) {
      return {400, R"({"error":"invalid_request"})"};
    }
    assertion = request.substr(at + 10);
    return {200, R"({"access_token":"ya29.test-token","expires_in":3599,"token_type":"Bearer"})"};
  });
  const nlohmann::json file = {{"type", "service_account"},
                               {"client_email", "writer@project.iam.gserviceaccount.com"},
                               {"private_key", key.private_pem},
                               {"token_uri", "http://127.0.0.1:" + std::to_string(server.port()) + "/token"}};
  auto source = ServiceAccountTokenSource(file.dump(), "test key");
  EXPECT_EQ(source->Token(), "ya29.test-token");
  EXPECT_EQ(source->Token(), "ya29.test-token");  // cached: the server answers only once
  ASSERT_FALSE(assertion.empty());
  EXPECT_TRUE(VerifiesRs256(assertion, key.public_pem));
  const auto claims = nlohmann::json::parse(FromBase64Url(assertion.substr(
      assertion.find('.') + 1, assertion.rfind('.') - assertion.find('.') - 1)));
  EXPECT_EQ(claims["iss"], "writer@project.iam.gserviceaccount.com");
  EXPECT_EQ(claims["scope"], "https://www.googleapis.com/auth/devstorage.read_write");
  EXPECT_EQ(claims["exp"].get<std::int64_t>() - claims["iat"].get<std::int64_t>(), 3600);
  EXPECT_NE(source->Describe().find("writer@project"), std::string::npos);
}

TEST(GoogleCredentials, ARefusedKeyIsAPermissionErrorNamingNoSecret) {
  const KeyPair key = MakeRsaKey();
  LocalHttpServer server(1, [](const std::string&) -> std::pair<int, std::string> {
    return {400, R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})"};
  });
  const nlohmann::json file = {{"type", "service_account"}, {"client_email", "w@p"},
                               {"private_key", key.private_pem},
                               {"token_uri", "http://127.0.0.1:" + std::to_string(server.port()) + "/token"}};
  try {
    ServiceAccountTokenSource(file.dump(), "test key")->Token();
    FAIL();
  } catch (const PermissionError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("invalid_grant: Invalid JWT Signature."), std::string::npos) << text;
    EXPECT_EQ(text.find("PRIVATE KEY"), std::string::npos) << text;
  }
  EXPECT_THROW(ServiceAccountTokenSource(R"({"type":"service_account","client_email":"w@p",
                                            "private_key":"not a key"})", "bad key"),
               ConfigError);
}

TEST(GoogleCredentials, FilesAndTheMetadataServerInTheirOrder) {
  mssql_cdc::testing::TempDir home;
  ScopedEnv no_file("GOOGLE_APPLICATION_CREDENTIALS", nullptr);
  ScopedEnv no_config("CLOUDSDK_CONFIG", nullptr);
  ScopedEnv home_env("HOME", home.path().c_str());
  EXPECT_EQ(FindGoogleCredentials(/*metadata_server=*/false), nullptr);

  LocalHttpServer metadata(1, [](const std::string& request) -> std::pair<int, std::string> {
    if (request.rfind("GET /computeMetadata/v1/instance/service-accounts/default/token ", 0) != 0 ||
        request.find("Metadata-Flavor: Google") == std::string::npos) {
      return {403, "{}"};
    }
    return {200, R"({"access_token":"ya29.from-metadata","expires_in":3000})"};
  });
  const std::string host = "127.0.0.1:" + std::to_string(metadata.port());
  ScopedEnv metadata_host("GCE_METADATA_HOST", host.c_str());
  auto from_metadata = FindGoogleCredentials(/*metadata_server=*/true);
  EXPECT_EQ(from_metadata->Token(), "ya29.from-metadata");

  // gcloud's application-default file comes before the metadata server; an unknown kind is
  // refused, naming the file.
  std::filesystem::create_directories(home.path() + "/.config/gcloud");
  std::ofstream(home.path() + "/.config/gcloud/application_default_credentials.json")
      << R"({"type":"external_account","audience":"x"})";
  try {
    FindGoogleCredentials(true);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("external_account"), std::string::npos) << e.what();
  }
  std::ofstream(home.path() + "/.config/gcloud/application_default_credentials.json")
      << R"({"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"})";
  EXPECT_NE(FindGoogleCredentials(true)->Describe().find("application_default_credentials.json"),
            std::string::npos);
  ScopedEnv missing("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json");
  EXPECT_THROW(FindGoogleCredentials(true), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc::storage
