#include "sim/access_token.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace mssql_cdc::sim {
namespace {

// base64url (RFC 4648 section 5, padding left out, as JWTs write it) decoded; nullopt when
// the text is not base64url.
std::optional<std::string> DecodeBase64Url(std::string_view text) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (standard.size() % 4 == 1) return std::nullopt;
  const std::size_t padding = (4 - standard.size() % 4) % 4;
  standard.append(padding, '=');
  std::string out(standard.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(standard.data()),
                                static_cast<int>(standard.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - padding);  // EVP_DecodeBlock counts the padding
  return out;
}

}  // namespace

std::string AccessTokenDigest(std::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest) ==
      nullptr) {
    throw SourceError("sim: SHA-256 of an access token failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : digest) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 0x0F]);
  }
  return hex;
}

std::optional<std::int64_t> AccessTokenExpiry(std::string_view token) {
  const std::size_t first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  const auto claims = DecodeBase64Url(token.substr(first + 1, second - first - 1));
  if (!claims) return std::nullopt;
  const auto json = nlohmann::json::parse(*claims, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("exp") || !json["exp"].is_number()) return std::nullopt;
  return json["exp"].get<std::int64_t>();
}

}  // namespace mssql_cdc::sim
