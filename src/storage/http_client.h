// One HTTP/1.1 request and its response, over TCP or TLS (OpenSSL, the system's trust store,
// the host name checked against the certificate). Object stores are reached through Arrow's
// filesystems; this client exists for the few requests those cannot make, the conditional
// writes a Delta commit needs (decision 0017). Each request opens its own connection and
// closes it, so no state is shared between calls. Requests say User-Agent: mssql-cdc, and go
// through the proxy the environment names (http_proxy.h).
#pragma once

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/percent_encoding.h"
#include "storage/http_endpoint.h"

namespace mssql_cdc::storage {

struct HttpRequest {
  std::string method;
  std::string target;  // the path and query, already percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// Thrown when no response arrived: the connection failed, broke or timed out. `sent` tells
// whether the whole request had been written, after which its effect is unknown.
class HttpTransportError : public std::runtime_error {
 public:
  HttpTransportError(const std::string& message, bool sent)
      : std::runtime_error(message), sent_(sent) {}
  bool sent() const { return sent_; }

 private:
  bool sent_;
};

// Sends `request` (adding Host, Content-Length and Connection: close) and reads the whole
// response. `timeout` bounds the connection and each wait for bytes.
HttpResponse SendHttpRequest(const HttpEndpoint& endpoint, const HttpRequest& request,
                             std::chrono::milliseconds timeout);

// When the environment names a proxy for `endpoint` (http_proxy.h), checks that it lets a
// request through, so that a store's first use fails with one clear error rather than the one
// Arrow's libraries would give: PermissionError for 407 (naming the proxy and its variable,
// never the password), ConfigError for a proxy variable that is refused, SourceError when the
// proxy or the store cannot be reached through it. Does nothing without a proxy.
void CheckProxyFor(const HttpEndpoint& endpoint,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));

}  // namespace mssql_cdc::storage
