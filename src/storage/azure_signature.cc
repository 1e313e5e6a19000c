#include "storage/azure_signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>

#include "core/ascii.h"
#include "storage/base64.h"

namespace mssql_cdc::storage {

std::string HttpDate(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char text[40];
  std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[utc.tm_wday],
                utc.tm_mday, kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour, utc.tm_min,
                utc.tm_sec);
  return text;
}

void SignAzureSharedKey(HttpRequest& request, const std::string& account, const std::string& key,
                        const std::vector<std::pair<std::string, std::string>>& query,
                        std::chrono::system_clock::time_point now) {
  request.headers.emplace_back("x-ms-date", HttpDate(now));
  auto header = [&](std::string_view name) -> std::string {
    for (const auto& [n, v] : request.headers) {
      if (AsciiLower(n) == name) return v;
    }
    return "";
  };
  std::string to_sign = request.method + "\n";
  for (std::string_view name : {"content-encoding", "content-language"}) {
    to_sign += header(name) + "\n";
  }
  to_sign += (request.body.empty() ? "" : std::to_string(request.body.size())) + "\n";
  for (std::string_view name : {"content-md5", "content-type", "date", "if-modified-since",
                                "if-match", "if-none-match", "if-unmodified-since", "range"}) {
    to_sign += header(name) + "\n";
  }
  std::vector<std::pair<std::string, std::string>> ms_headers;
  for (const auto& [name, value] : request.headers) {
    const std::string lower = AsciiLower(name);
    if (lower.rfind("x-ms-", 0) == 0) ms_headers.emplace_back(lower, value);
  }
  std::sort(ms_headers.begin(), ms_headers.end());
  for (const auto& [name, value] : ms_headers) to_sign += name + ":" + value + "\n";
  to_sign += "/" + account + request.target.substr(0, request.target.find('?'));
  std::vector<std::pair<std::string, std::string>> parameters;
  for (const auto& [name, value] : query) parameters.emplace_back(AsciiLower(name), value);
  std::sort(parameters.begin(), parameters.end());
  for (const auto& [name, value] : parameters) to_sign += "\n" + name + ":" + value;

  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(to_sign.data()), to_sign.size(), digest, &size);
  request.headers.emplace_back(
      "Authorization",
      "SharedKey " + account + ":" + Base64Encode(std::string(reinterpret_cast<char*>(digest), size)));
}

}  // namespace mssql_cdc::storage
