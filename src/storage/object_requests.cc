#include "storage/object_requests.h"

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
