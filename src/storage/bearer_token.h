// OAuth 2.0 access tokens for the requests the engine makes to a store itself (the conditional
// writes of decision 0017) where the store takes a bearer token: Google Cloud Storage, and
// Azure Blob storage with an Entra ID identity. What the token endpoints have in common lives
// here; where each cloud's credentials are found lives beside its store.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "storage/http_client.h"

namespace mssql_cdc::storage {

// A source of bearer tokens; thread-safe. A token is fetched when first asked for and again
// five minutes before it expires (half its lifetime, when that is shorter).
class BearerTokenSource {
 public:
  virtual ~BearerTokenSource() = default;
  // Throws PermissionError when the token endpoint refuses, SourceError when it cannot be
  // reached or answers without a token. The token is never part of a message.
  std::string Token();
  // Where the credentials come from, for messages ("the service account a@b from /k.json").
  virtual std::string Describe() const = 0;

 protected:
  struct Fetched {
    std::string token;
    std::chrono::seconds lifetime;
  };
  virtual Fetched Fetch() = 0;

  // Sends `request` to the token endpoint at `url` and reads its answer: access_token, and its
  // lifetime from expires_in or expires_on (numbers, or numbers in strings, as Azure's managed
  // identity endpoints write them). `whose` names the credentials in messages.
  static Fetched RequestToken(const std::string& url, HttpRequest request, const std::string& whose);
  // A POST of an application/x-www-form-urlencoded body.
  static HttpRequest FormPost(const std::string& body);

 private:
  std::mutex mutex_;
  std::string token_;
  std::chrono::steady_clock::time_point refresh_at_{};
};

}  // namespace mssql_cdc::storage
