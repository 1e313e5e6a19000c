// A small HTTP server on a local port for `mssql-cdc run --metrics-port`: GET /metrics answers
// the text its `render` function makes (Prometheus text format 0.0.4); anything else is 404.
// It listens on 127.0.0.1 only (health is for the host's scraper, not the network), answers one
// request per connection on its own thread, and stops when destroyed.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace mssql_cdc::cli {

class MetricsEndpoint {
 public:
  // Binds the port now; ConfigError when it cannot (in use, not allowed), so that a run
  // refuses before it writes anything.
  MetricsEndpoint(int port, std::function<std::string()> render);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }

 private:
  void Serve();
  void Answer(int connection);

  int listener_ = -1;
  int port_ = 0;
  std::function<std::string()> render_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace mssql_cdc::cli
