#include "cli/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "core/errors.h"

namespace mssql_cdc::cli {
namespace {

void SendAll(int connection, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(connection, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away
    sent += static_cast<std::size_t>(n);
  }
}

std::string Response(const std::string& status, const std::string& type, const std::string& body) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + type + "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(int port, std::function<std::string()> render) : render_(std::move(render)) {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw ConfigError(std::string("--metrics-port: no socket: ") + std::strerror(errno));
  const int on = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listener_, 16) != 0) {
    const std::string why = std::strerror(errno);
    close(listener_);
    throw ConfigError("--metrics-port " + std::to_string(port) + ": cannot listen on 127.0.0.1:" +
                      std::to_string(port) + " (" + why + "); choose a free port");
  }
  socklen_t length = sizeof(address);
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  close(listener_);
}

void MetricsEndpoint::Serve() {
  while (!stop_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    try {
      Answer(connection);
    } catch (const std::exception& e) {
      spdlog::warn("metrics endpoint: {}", e.what());
    }
    close(connection);
  }
}

void MetricsEndpoint::Answer(int connection) {
  // The request line and headers, up to a blank line; a slow or silent client gets 2 s.
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    pollfd ready{connection, POLLIN, 0};
    if (poll(&ready, 1, 2000) <= 0) return;
    const ssize_t n = recv(connection, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  if (line.rfind("GET /metrics ", 0) == 0 || line == "GET /metrics") {
    SendAll(connection, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_()));
  } else {
    SendAll(connection, Response("404 Not Found", "text/plain", "mssql-cdc serves GET /metrics\n"));
  }
}

}  // namespace mssql_cdc::cli
