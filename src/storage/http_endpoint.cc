#include "storage/http_endpoint.h"

#include "core/errors.h"

namespace mssql_cdc::storage {

std::string HttpEndpoint::HostHeader() const {
  bool default_port = (tls && port == 443) || (!tls && port == 80);
  std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return default_port ? name : name + ":" + std::to_string(port);
}

HttpEndpoint ParseHttpEndpoint(const std::string& url, const std::string& what) {
  HttpEndpoint endpoint;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    endpoint.tls = false;
    endpoint.port = 80;
    rest = url.substr(7);
  } else {
    throw ConfigError(what + " '" + url + "' is not an http:// or https:// URL");
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos || rest.find('@') != std::string::npos) {
    throw ConfigError(what + " '" + url + "' must be a scheme and a host, with an optional port "
                      "(https://host:port)");
  }
  std::string host_part = rest;
  std::string port_part;
  if (rest[0] == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos) throw ConfigError(what + " '" + url + "' has an unclosed '['");
    host_part = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') throw ConfigError(what + " '" + url + "' is malformed");
      port_part = rest.substr(close + 2);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    host_part = rest.substr(0, colon);
    port_part = rest.substr(colon + 1);
  }
  endpoint.host = host_part;
  if (!port_part.empty()) {
    int port = 0;
    for (char c : port_part) {
      if (c < '0' || c > '9' || port > 65535) {
        throw ConfigError(what + " '" + url + "' has a port that is not a number from 1 to 65535");
      }
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) {
      throw ConfigError(what + " '" + url + "' has a port that is not a number from 1 to 65535");
    }
    endpoint.port = port;
  }
  return endpoint;
}

std::pair<HttpEndpoint, std::string> ParseHttpUrl(const std::string& url, const std::string& what) {
  const auto scheme_end = url.find("://");
  const auto path_start =
      url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);
  return {ParseHttpEndpoint(url.substr(0, path_start), what), path};
}

}  // namespace mssql_cdc::storage
