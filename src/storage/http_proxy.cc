#include "storage/http_proxy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <tuple>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/percent_encoding.h"
#include "storage/base64.h"
#include "storage/environment.h"

namespace mssql_cdc::storage {
namespace {

std::string Trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::optional<std::uint32_t> Ipv4(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1) return std::nullopt;
  return ntohl(address.s_addr);
}

// The first of `names` that is set, and its value.
std::pair<std::string, std::string> FirstSet(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (std::string value = EnvironmentVariable(name); !value.empty()) return {name, value};
  }
  return {"", ""};
}

}  // namespace

std::string HttpProxy::Authorization() const {
  if (username.empty()) return "";
  return "Basic " + Base64Encode(username + ":" + password);
}

std::string HttpProxy::Describe() const {
  return "the proxy http://" + endpoint.HostHeader() + " (" + variable + ")";
}

HttpProxy ParseHttpProxy(const std::string& value, const std::string& variable) {
  HttpProxy proxy;
  proxy.variable = variable;
  std::string rest = value;
  if (const auto scheme_end = rest.find("://"); scheme_end != std::string::npos) {
    const std::string scheme = AsciiLower(rest.substr(0, scheme_end));
    if (scheme != "http") {
      throw ConfigError(variable + " names a " + scheme + ":// proxy; the engine connects to "
                        "http:// proxies only (requests to an https:// store are still TLS end "
                        "to end, through the proxy's tunnel)");
    }
    rest = rest.substr(scheme_end + 3);
  }
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string user_info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = user_info.find(':');
    proxy.username = PercentDecodeLenient(user_info.substr(0, colon));
    if (colon != std::string::npos) proxy.password = PercentDecodeLenient(user_info.substr(colon + 1));
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  // The port follows the last ':' after the host (an IPv6 address's brackets included).
  const std::size_t host_end = !rest.empty() && rest.front() == '[' ? rest.find(']') : 0;
  const std::size_t colon = rest.rfind(':');
  const bool has_port = host_end != std::string::npos && colon != std::string::npos && colon > host_end &&
                        colon + 1 < rest.size();
  if (!has_port) {
    throw ConfigError(variable + " names the proxy '" + rest + "' without a port; write "
                      "http://host:port (tools disagree on the default, 1080 or 80)");
  }
  proxy.endpoint = ParseHttpEndpoint("http://" + rest, variable);
  return proxy;
}

bool NoProxyMatches(const std::string& no_proxy, const std::string& host) {
  const std::string name = AsciiLower(host);
  std::stringstream entries(no_proxy);
  for (std::string entry; std::getline(entries, entry, ',');) {
    entry = AsciiLower(Trim(entry));
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.front() == '[' && entry.find(']') != std::string::npos) {
      entry = entry.substr(1, entry.find(']') - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry = entry.substr(0, entry.find(':'));  // a port, which curl does not compare
    }
    if (const auto slash = entry.find('/'); slash != std::string::npos) {
      const auto network = Ipv4(entry.substr(0, slash));
      const auto address = Ipv4(name);
      const std::string bits_text = entry.substr(slash + 1);
      if (!network || !address || bits_text.empty() || bits_text.size() > 2 ||
          bits_text.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      const int bits = std::stoi(bits_text);
      if (bits > 32) continue;
      const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
      if ((*network & mask) == (*address & mask)) return true;
      continue;
    }
    if (entry.front() == '.') entry.erase(0, 1);
    if (name == entry) return true;
    if (name.size() > entry.size() && name.compare(name.size() - entry.size(), entry.size(), entry) == 0 &&
        name[name.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

std::optional<HttpProxy> ProxyFor(const HttpEndpoint& endpoint) {
  const auto [no_proxy_name, no_proxy] = FirstSet({"no_proxy", "NO_PROXY"});
  if (!no_proxy.empty() && NoProxyMatches(no_proxy, endpoint.host)) return std::nullopt;
  auto [variable, value] = endpoint.tls ? FirstSet({"https_proxy", "HTTPS_PROXY"}) : FirstSet({"http_proxy"});
  if (value.empty()) std::tie(variable, value) = FirstSet({"all_proxy", "ALL_PROXY"});
  if (value.empty()) return std::nullopt;
  return ParseHttpProxy(value, variable);
}

}  // namespace mssql_cdc::storage
