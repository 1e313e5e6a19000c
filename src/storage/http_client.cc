#include "storage/http_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "core/ascii.h"
#include "core/errors.h"
#include "storage/http_proxy.h"
#include "tls/openssl_errors.h"

namespace mssql_cdc::storage {
namespace {

using Clock = std::chrono::steady_clock;

struct SslFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
  void operator()(SSL* s) const { SSL_free(s); }
};

// One client context for the process: the system's trust store, TLS 1.2 or later.
SSL_CTX* ClientContext() {
  static std::unique_ptr<SSL_CTX, SslFree> context = [] {
    std::unique_ptr<SSL_CTX, SslFree> made(SSL_CTX_new(TLS_client_method()));
    if (!made) throw SourceError(tls::TakeOpenSslErrors("cannot create a TLS context"));
    SSL_CTX_set_min_proto_version(made.get(), TLS1_2_VERSION);
    SSL_CTX_set_verify(made.get(), SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_default_verify_paths(made.get());
    return made;
  }();
  return context.get();
}

// A connected socket, directly or to a proxy (through its tunnel, for TLS), and TLS over it
// when asked; every wait bounded by the deadline.
class Connection {
 public:
  Connection(const HttpEndpoint& endpoint, const std::optional<HttpProxy>& proxy,
             std::chrono::milliseconds timeout)
      : endpoint_(endpoint), timeout_(timeout) {
    if (proxy) through_ = " through " + proxy->Describe();
    Connect(proxy ? proxy->endpoint : endpoint);
    if (endpoint.tls) {
      if (proxy) Tunnel(*proxy);
      Handshake();
    }
  }
  ~Connection() {
    if (ssl_) SSL_shutdown(ssl_.get());
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void WriteAll(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      if (ssl_) {
        int n = SSL_write(ssl_.get(), bytes.data() + done, static_cast<int>(bytes.size() - done));
        if (n <= 0) {
          WaitFor(SSL_get_error(ssl_.get(), n), "sending the request");
          continue;
        }
        done += static_cast<std::size_t>(n);
      } else {
        ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            Poll(POLLOUT, "sending the request");
            continue;
          }
          Fail("sending the request", std::strerror(errno), false);
        }
        done += static_cast<std::size_t>(n);
      }
    }
  }

  // Appends what arrives to `into`; false at the end of the stream.
  bool ReadSome(std::string& into) {
    char buffer[16 * 1024];
    for (;;) {
      if (ssl_) {
        int n = SSL_read(ssl_.get(), buffer, sizeof buffer);
        if (n > 0) {
          into.append(buffer, static_cast<std::size_t>(n));
          return true;
        }
        int error = SSL_get_error(ssl_.get(), n);
        if (error == SSL_ERROR_ZERO_RETURN) return false;
        if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return false;  // closed without notify
        WaitFor(error, "reading the response");
      } else {
        ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        if (n > 0) {
          into.append(buffer, static_cast<std::size_t>(n));
          return true;
        }
        if (n == 0) return false;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
          Poll(POLLIN, "reading the response");
          continue;
        }
        Fail("reading the response", std::strerror(errno), true);
      }
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& doing, const std::string& why, bool sent) {
    throw HttpTransportError(endpoint_.HostHeader() + through_ + ": " + doing + ": " + why, sent);
  }

  void Poll(short events, const std::string& doing) {
    pollfd p{fd_, events, 0};
    int n;
    do {
      n = ::poll(&p, 1, static_cast<int>(timeout_.count()));
    } while (n < 0 && errno == EINTR);
    if (n == 0) Fail(doing, "no answer within " + std::to_string(timeout_.count()) + " ms",
                     doing != "connecting" && doing != "sending the request");
    if (n < 0) Fail(doing, std::strerror(errno), false);
  }

  void WaitFor(int ssl_error, const std::string& doing) {
    if (ssl_error == SSL_ERROR_WANT_READ) return Poll(POLLIN, doing);
    if (ssl_error == SSL_ERROR_WANT_WRITE) return Poll(POLLOUT, doing);
    Fail(doing, tls::TakeOpenSslErrors("TLS error " + std::to_string(ssl_error)),
         doing == "reading the response");
  }

  void Connect(const HttpEndpoint& to) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(to.host.c_str(), std::to_string(to.port).c_str(), &hints,
                           &found);
    if (rc != 0) Fail("resolving the host", gai_strerror(rc), false);
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
    std::string last_error = "no address";
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int n;
        do {
          n = ::poll(&p, 1, static_cast<int>(timeout_.count()));
        } while (n < 0 && errno == EINTR);
        int error = 0;
        socklen_t size = sizeof error;
        if (n > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
          return;
        }
        last_error = n == 0 ? "timed out" : std::strerror(error != 0 ? error : errno);
      } else {
        last_error = std::strerror(errno);
      }
      ::close(fd);
    }
    Fail("connecting", last_error, false);
  }

  // Asks the proxy for a tunnel to the endpoint (CONNECT), over which TLS then runs end to end.
  void Tunnel(const HttpProxy& proxy) {
    const bool ipv6 = endpoint_.host.find(':') != std::string::npos;
    const std::string authority =
        (ipv6 ? "[" + endpoint_.host + "]" : endpoint_.host) + ":" + std::to_string(endpoint_.port);
    std::string head =
        "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\nUser-Agent: mssql-cdc\r\n";
    if (const std::string authorization = proxy.Authorization(); !authorization.empty()) {
      head += "Proxy-Authorization: " + authorization + "\r\n";
    }
    WriteAll(head + "\r\n");
    std::string raw;
    while (raw.find("\r\n\r\n") == std::string::npos) {
      if (!ReadSome(raw)) Fail("opening the proxy's tunnel", "the proxy closed the connection", false);
    }
    const std::string status_line = raw.substr(0, raw.find("\r\n"));
    const auto space = status_line.find(' ');
    const int status = space == std::string::npos ? 0 : std::atoi(status_line.c_str() + space + 1);
    if (status == 407) {
      throw PermissionError(proxy.Describe() + " refused the tunnel to " + endpoint_.HostHeader() +
                            " (407 Proxy Authentication Required); check the user and password in " +
                            proxy.variable);
    }
    if (status < 200 || status > 299) {
      const std::string answer = status_line.substr(space == std::string::npos ? 0 : space + 1);
      Fail("opening the proxy's tunnel", "the proxy answered " + answer, false);
    }
  }

  void Handshake() {
    ssl_.reset(SSL_new(ClientContext()));
    if (!ssl_) Fail("starting TLS", tls::TakeOpenSslErrors("SSL_new failed"), false);
    SSL_set_fd(ssl_.get(), fd_);
    SSL_set_tlsext_host_name(ssl_.get(), endpoint_.host.c_str());
    SSL_set1_host(ssl_.get(), endpoint_.host.c_str());
    for (;;) {
      int n = SSL_connect(ssl_.get());
      if (n == 1) return;
      int error = SSL_get_error(ssl_.get(), n);
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
        long verify = SSL_get_verify_result(ssl_.get());
        std::string why = verify != X509_V_OK
                              ? std::string("the certificate is not trusted: ") +
                                    X509_verify_cert_error_string(verify)
                              : tls::TakeOpenSslErrors("the TLS handshake failed");
        Fail("starting TLS", why, false);
      }
      WaitFor(error, "starting TLS");
    }
  }

  HttpEndpoint endpoint_;
  std::string through_;  // " through the proxy ..." in messages, when there is one
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::unique_ptr<SSL, SslFree> ssl_;
};

std::size_t ParseHex(const std::string& text) {
  std::size_t value = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) break;
    value = value * 16 + static_cast<std::size_t>(digit);
  }
  return value;
}

// Decodes a chunked body in full (the connection closes after it).
std::string Dechunk(const std::string& raw) {
  std::string body;
  std::size_t at = 0;
  for (;;) {
    std::size_t line_end = raw.find("\r\n", at);
    if (line_end == std::string::npos) break;
    std::size_t size = ParseHex(raw.substr(at, line_end - at));
    if (size == 0) break;
    body.append(raw, line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
  return body;
}

}  // namespace

HttpResponse SendHttpRequest(const HttpEndpoint& endpoint, const HttpRequest& request,
                             std::chrono::milliseconds timeout) {
  const auto proxy = ProxyFor(endpoint);
  Connection connection(endpoint, proxy, timeout);
  // Through a proxy, a plain-HTTP request names its whole URL (RFC 9112's absolute form).
  const bool forwarded = proxy && !endpoint.tls;
  std::string head = request.method + " " + (forwarded ? "http://" + endpoint.HostHeader() : "") +
                     request.target + " HTTP/1.1\r\n";
  head += "Host: " + endpoint.HostHeader() + "\r\nUser-Agent: mssql-cdc\r\n";
  if (forwarded && !proxy->Authorization().empty()) {
    head += "Proxy-Authorization: " + proxy->Authorization() + "\r\n";
  }
  for (const auto& [name, value] : request.headers) head += name + ": " + value + "\r\n";
  if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
    head += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  head += "Connection: close\r\n\r\n";
  connection.WriteAll(head + request.body);

  std::string raw;
  std::size_t header_end = std::string::npos;
  while ((header_end = raw.find("\r\n\r\n")) == std::string::npos) {
    if (!connection.ReadSome(raw)) {
      throw HttpTransportError(endpoint.HostHeader() + ": the connection closed before a response",
                               true);
    }
  }
  HttpResponse response;
  std::size_t line_end = raw.find("\r\n");
  std::string status_line = raw.substr(0, line_end);
  auto space = status_line.find(' ');
  if (status_line.rfind("HTTP/1.", 0) != 0 || space == std::string::npos) {
    throw HttpTransportError(endpoint.HostHeader() + ": not an HTTP response", true);
  }
  response.status = std::atoi(status_line.c_str() + space + 1);
  if (forwarded && response.status == 407) {
    throw PermissionError(proxy->Describe() + " refused a request to " + endpoint.HostHeader() +
                          " (407 Proxy Authentication Required); check the user and password in " +
                          proxy->variable);
  }
  std::size_t at = line_end + 2;
  while (at < header_end) {
    std::size_t end = raw.find("\r\n", at);
    std::string line = raw.substr(at, end - at);
    at = end + 2;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    response.headers[AsciiLower(line.substr(0, colon))] = value;
  }
  std::string rest = raw.substr(header_end + 4);
  const bool no_body = request.method == "HEAD" || response.status == 204 || response.status == 304;
  auto length = response.headers.find("content-length");
  if (no_body) {
    return response;
  } else if (length != response.headers.end()) {
    const std::size_t want = std::strtoull(length->second.c_str(), nullptr, 10);
    while (rest.size() < want && connection.ReadSome(rest)) {
    }
    if (rest.size() < want) {
      throw HttpTransportError(endpoint.HostHeader() + ": the response body was cut short", true);
    }
    rest.resize(want);
    response.body = std::move(rest);
  } else {
    while (connection.ReadSome(rest)) {
    }
    auto encoding = response.headers.find("transfer-encoding");
    response.body = encoding != response.headers.end() &&
                            AsciiLower(encoding->second).find("chunked") != std::string::npos
                        ? Dechunk(rest)
                        : std::move(rest);
  }
  return response;
}

void CheckProxyFor(const HttpEndpoint& endpoint, std::chrono::milliseconds timeout) {
  const auto proxy = ProxyFor(endpoint);
  if (!proxy) return;
  try {
    if (endpoint.tls) {
      Connection tunnel(endpoint, proxy, timeout);  // CONNECT, then TLS to the store
    } else {
      HttpRequest request;
      request.method = "HEAD";
      request.target = "/";
      (void)SendHttpRequest(endpoint, request, timeout);
    }
  } catch (const HttpTransportError& e) {
    throw SourceError("cannot reach " + std::string(endpoint.tls ? "https://" : "http://") +
                      endpoint.HostHeader() + " through " + proxy->Describe() + ": " + e.what());
  }
}

}  // namespace mssql_cdc::storage
