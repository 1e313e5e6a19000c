#include "storage/aws_signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>
#include <vector>

#include "core/ascii.h"

namespace mssql_cdc::storage {
namespace {

std::string Hex(const unsigned char* data, std::size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::string Hmac(const std::string& key, const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string Trimmed(const std::string& value) {
  auto first = value.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  auto last = value.find_last_not_of(" \t");
  return value.substr(first, last - first + 1);
}

// The query string with its parameters sorted by name, as SigV4 asks; values stay as given.
std::string CanonicalQuery(const std::string& query) {
  if (query.empty()) return "";
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at <= query.size()) {
    auto amp = query.find('&', at);
    std::string part = query.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
    if (part.find('=') == std::string::npos) part += '=';
    parts.push_back(part);
    if (amp == std::string::npos) break;
    at = amp + 1;
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "&") + part;
  return out;
}

}  // namespace

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string S3EncodeKey(const std::string& key) { return PercentEncode(key, true); }

std::string AwsEncodeQueryValue(const std::string& value) { return PercentEncode(value, false); }

void SignAwsRequest(HttpRequest& request, const std::string& host, const std::string& region,
                    const std::string& service, const AwsCredentials& credentials,
                    std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  const std::string amz_date = stamp;
  const std::string day = amz_date.substr(0, 8);
  const std::string payload_hash = Sha256Hex(request.body);

  request.headers.emplace_back("x-amz-date", amz_date);
  request.headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  std::vector<std::pair<std::string, std::string>> signed_headers = {{"host", host}};
  for (const auto& [name, value] : request.headers) {
    signed_headers.emplace_back(AsciiLower(name), Trimmed(value));
  }
  std::sort(signed_headers.begin(), signed_headers.end());
  std::string canonical_headers, header_names;
  for (const auto& [name, value] : signed_headers) {
    canonical_headers += name + ":" + value + "\n";
    header_names += (header_names.empty() ? "" : ";") + name;
  }
  const auto question = request.target.find('?');
  const std::string path = request.target.substr(0, question);
  const std::string query =
      question == std::string::npos ? "" : request.target.substr(question + 1);
  const std::string canonical_request = request.method + "\n" + path + "\n" +
                                        CanonicalQuery(query) + "\n" + canonical_headers + "\n" +
                                        header_names + "\n" + payload_hash;
  const std::string scope = day + "/" + region + "/" + service + "/aws4_request";
  const std::string string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(canonical_request);
  std::string key = Hmac("AWS4" + credentials.secret_access_key, day);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string signature = Hmac(key, string_to_sign);
  request.headers.emplace_back(
      "Authorization", "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                           ", SignedHeaders=" + header_names + ", Signature=" +
                           Hex(reinterpret_cast<const unsigned char*>(signature.data()),
                               signature.size()));
}

}  // namespace mssql_cdc::storage
