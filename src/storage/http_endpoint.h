// Where an HTTP request goes: a scheme, a host and a port, read from the URLs of settings and
// environment variables (store endpoints, token endpoints, proxies).
#pragma once

#include <string>
#include <utility>

namespace mssql_cdc::storage {

struct HttpEndpoint {
  bool tls = true;
  std::string host;  // a name or an address, without brackets
  int port = 443;

  // "host" or "host:port", as the Host header and a signature carry it.
  std::string HostHeader() const;
};

// Reads "https://host[:port]" or "http://host[:port]" (a trailing '/' allowed). Throws
// ConfigError naming `what` (the option or variable the text came from) otherwise.
HttpEndpoint ParseHttpEndpoint(const std::string& url, const std::string& what);

// Splits "https://host[:port]/path" into its endpoint and its path ("/" when it has none).
// Throws ConfigError naming `what` otherwise.
std::pair<HttpEndpoint, std::string> ParseHttpUrl(const std::string& url, const std::string& what);

}  // namespace mssql_cdc::storage
