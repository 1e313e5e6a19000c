// Which proxy a store request takes: the proxy variables as curl reads them, and NO_PROXY.
#include "storage/http_proxy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"

namespace mssql_cdc::storage {
namespace {

// Sets proxy variables for one test and clears every one of them before and after.
class ProxyEnvironment {
 public:
  explicit ProxyEnvironment(std::initializer_list<std::pair<const char*, const char*>> values) {
    Clear();
    for (const auto& [name, value] : values) setenv(name, value, 1);
  }
  ~ProxyEnvironment() { Clear(); }

 private:
  static void Clear() {
    for (const char* name : {"http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                             "NO_PROXY", "no_proxy", "HTTP_PROXY"}) {
      unsetenv(name);
    }
  }
};

HttpEndpoint Https(const std::string& host) { return ParseHttpEndpoint("https://" + host, "test"); }
HttpEndpoint Http(const std::string& host) { return ParseHttpEndpoint("http://" + host, "test"); }

TEST(HttpProxy, ReadsHostPortAndCredentialsAndHidesThePassword) {
  const HttpProxy proxy = ParseHttpProxy("http://cdc%40corp:s%3Acret@proxy.corp:3128/", "HTTPS_PROXY");
  EXPECT_EQ(proxy.endpoint.host, "proxy.corp");
  EXPECT_EQ(proxy.endpoint.port, 3128);
  EXPECT_FALSE(proxy.endpoint.tls);
  EXPECT_EQ(proxy.username, "cdc@corp");
  EXPECT_EQ(proxy.password, "s:cret");
  EXPECT_EQ(proxy.Authorization(), "Basic Y2RjQGNvcnA6czpjcmV0");  // base64 of cdc@corp:s:cret
  EXPECT_EQ(proxy.Describe(), "the proxy http://proxy.corp:3128 (HTTPS_PROXY)");
  EXPECT_EQ(ParseHttpProxy("10.1.2.3:8080", "http_proxy").endpoint.port, 8080);  // http assumed
  EXPECT_EQ(ParseHttpProxy("http://[::1]:8080", "http_proxy").endpoint.host, "::1");
  EXPECT_TRUE(ParseHttpProxy("http://proxy:80", "http_proxy").Authorization().empty());
}

TEST(HttpProxy, RefusesOtherSchemesAndAMissingPortWithoutThePassword) {
  for (const char* value : {"https://proxy:443", "socks5://user:hunter2@proxy:1080", "http://user:hunter2@proxy",
                            "proxy", "http://proxy:", "http://[::1]"}) {
    try {
      ParseHttpProxy(value, "HTTPS_PROXY");
      FAIL() << value << " must be refused";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("HTTPS_PROXY"), std::string::npos) << message;
      EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    }
  }
}

TEST(HttpProxy, NoProxyNamesHostsDomainsAddressesAndRanges) {
  const std::string list = " localhost, .internal.corp ,10.0.0.0/8,169.254.169.254, [::1], s3.amazonaws.com:443";
  EXPECT_TRUE(NoProxyMatches(list, "localhost"));
  EXPECT_TRUE(NoProxyMatches(list, "LOCALHOST"));
  EXPECT_TRUE(NoProxyMatches(list, "blob.internal.corp"));
  EXPECT_TRUE(NoProxyMatches(list, "internal.corp"));
  EXPECT_FALSE(NoProxyMatches(list, "notinternal.corp"));
  EXPECT_TRUE(NoProxyMatches(list, "10.20.30.40"));
  EXPECT_FALSE(NoProxyMatches(list, "11.0.0.1"));
  EXPECT_TRUE(NoProxyMatches(list, "169.254.169.254"));
  EXPECT_TRUE(NoProxyMatches(list, "::1"));
  EXPECT_TRUE(NoProxyMatches(list, "bucket.s3.amazonaws.com"));
  EXPECT_FALSE(NoProxyMatches(list, "storage.googleapis.com"));
  EXPECT_TRUE(NoProxyMatches("*", "anything.example"));
  EXPECT_FALSE(NoProxyMatches("", "anything.example"));
}

TEST(HttpProxy, ChoosesTheVariableCurlWouldForTheScheme) {
  {
    ProxyEnvironment env({{"https_proxy", "http://tls-proxy:3128"}, {"http_proxy", "http://plain-proxy:3128"}});
    EXPECT_EQ(ProxyFor(Https("account.blob.core.windows.net"))->endpoint.host, "tls-proxy");
    EXPECT_EQ(ProxyFor(Http("127.0.0.1:10000"))->endpoint.host, "plain-proxy");
  }
  {
    // HTTP_PROXY is not read (a CGI server sets it from a request's Proxy header); ALL_PROXY is.
    ProxyEnvironment env({{"HTTP_PROXY", "http://cgi:1"}, {"HTTPS_PROXY", "http://upper:3128"}});
    EXPECT_FALSE(ProxyFor(Http("minio:9000")));
    EXPECT_EQ(ProxyFor(Https("storage.googleapis.com"))->variable, "HTTPS_PROXY");
  }
  {
    ProxyEnvironment env({{"ALL_PROXY", "http://every:8080"}, {"NO_PROXY", ".amazonaws.com"}});
    EXPECT_EQ(ProxyFor(Http("minio:9000"))->endpoint.host, "every");
    EXPECT_FALSE(ProxyFor(Https("bucket.s3.eu-west-1.amazonaws.com")));
  }
  {
    ProxyEnvironment env({});
    EXPECT_FALSE(ProxyFor(Https("storage.googleapis.com")));
  }
}

}  // namespace
}  // namespace mssql_cdc::storage
