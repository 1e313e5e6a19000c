#include "storage/object_requests.h"

#include <algorithm>

namespace mssql_cdc::storage {

namespace {
constexpr std::chrono::milliseconds kRequestTimeout{30'000};
}  // namespace

std::optional<PutResult> SendObjectRequest(const HttpEndpoint& endpoint, const HttpRequest& request,
                                           HttpResponse& response) {
  try {
    response = SendHttpRequest(endpoint, request, kRequestTimeout);
  } catch (const HttpTransportError& e) {
    return PutResult{e.sent() ? PutOutcome::kUnknown : PutOutcome::kTransient, e.what()};
  }
  return std::nullopt;
}

std::pair<std::string, std::string> BucketAndPrefix(const std::string& directory) {
  const auto slash = directory.find('/');
  return {directory.substr(0, slash),
          slash == std::string::npos ? "" : directory.substr(slash + 1) + "/"};
}

std::vector<FileInfo> CollectListing(const std::function<ListPage(const std::string& token)>& fetch,
                                     const std::string& after) {
  std::vector<FileInfo> entries;
  std::string token;
  do {
    ListPage page = fetch(token);
    for (auto& entry : page.entries) {
      if (entry.name > after) entries.push_back(std::move(entry));
    }
    token = std::move(page.next);
  } while (!token.empty());
  std::sort(entries.begin(), entries.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  return entries;
}

std::optional<PutResult> RetryableOutcome(int status, const std::string& code) {
  switch (status) {
    case 409:
    case 429:
    case 503:
      return PutResult{PutOutcome::kTransient, code};
    case 500:
    case 502:
    case 504:
      return PutResult{PutOutcome::kUnknown, code};
    default:
      return std::nullopt;
  }
}

}  // namespace mssql_cdc::storage
