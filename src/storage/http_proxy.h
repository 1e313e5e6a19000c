// The HTTP proxy a request to a store goes through, chosen from the environment by curl's rules,
// which the Azure and Google libraries inside Arrow follow (they use curl): https_proxy or
// HTTPS_PROXY for an https:// store, http_proxy for an http:// one (not HTTP_PROXY, which a
// CGI server may set from a request), else all_proxy or ALL_PROXY; none when no_proxy (or
// NO_PROXY) names the host: "*", a host name that equals it or is a domain above it (a leading
// '.' allowed), an address, or an IPv4 range (10.0.0.0/8). The engine's own requests take it;
// Arrow's S3 client, which reads no variable, is given the same proxy (s3_store.cc).
#pragma once

#include <optional>
#include <string>

#include "storage/http_endpoint.h"

namespace mssql_cdc::storage {

struct HttpProxy {
  HttpEndpoint endpoint;       // always http:// (a tunnel carries TLS to an https:// store)
  std::string username;        // decoded; empty when the proxy asks for none
  std::string password;        // decoded; never part of a message
  std::string variable;        // the variable it came from, for messages

  // "Basic <base64>" for Proxy-Authorization; empty without a username.
  std::string Authorization() const;
  // "http://host:port (HTTPS_PROXY)", without the credentials, for messages.
  std::string Describe() const;
};

// Reads a proxy variable's value: "http://[user[:password]@]host:port" or "host:port" (http is
// assumed, as curl does). Throws ConfigError, naming `variable` but never the password, for
// another scheme (https://, socks5://) or a missing port (curl assumes 1080 where other tools
// assume 80, so it is not guessed).
HttpProxy ParseHttpProxy(const std::string& value, const std::string& variable);

// Whether a NO_PROXY list names `host`.
bool NoProxyMatches(const std::string& no_proxy, const std::string& host);

// The proxy the environment gives requests to `endpoint`, or nullopt for a direct connection.
std::optional<HttpProxy> ProxyFor(const HttpEndpoint& endpoint);

}  // namespace mssql_cdc::storage
