#include "tds/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "tds/session.h"
#include "tds/socket_channel.h"

namespace mssql_cdc::tds {
namespace {

// SPIDs below 51 are SQL Server's system sessions; clients expect user sessions above.
constexpr int kFirstSpid = 51;
constexpr int kSpidRange = 32000;

std::string PeerName(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

class TdsServer::Impl {
 public:
  Impl(std::shared_ptr<QueryHandlerFactory> factory, const ServerOptions& options)
      : factory_(std::move(factory)), options_(options) {
    if (options_.force_encryption && options_.tls == nullptr) {
      throw ConfigError("forcing encryption needs a certificate: give --tls-cert and --tls-key");
    }
    Listen();
    if (options_.tls != nullptr) {
      spdlog::info("tds: encrypting {} connections with the certificate of {}",
                   options_.force_encryption ? "all" : "the asking", options_.tls->subject());
    }
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~Impl() { Stop(); }

  int port() const { return port_; }
  int connection_count() const { return active_.load(); }

  void Stop() {
    std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes the blocked accept()
    if (acceptor_.joinable()) acceptor_.join();
    ::close(listen_fd_);
    std::unique_lock lock(mutex_);
    for (auto& connection : connections_) {
      if (connection->fd >= 0) ::shutdown(connection->fd, SHUT_RDWR);
    }
    std::list<std::unique_ptr<Connection>> ending;
    ending.swap(connections_);
    lock.unlock();  // each session closes its own descriptor under the lock as it ends
    for (auto& connection : ending) connection->thread.join();
    stopped_ = true;
  }

 private:
  struct Connection {
    int fd = -1;  // -1 once the session closed it (under mutex_)
    std::thread thread;
    std::atomic<bool> finished{false};
  };

  void Listen() {
    const std::string where = options_.listen_address + ":" + std::to_string(options_.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(options_.port);
    int rc = ::getaddrinfo(options_.listen_address.c_str(), service.c_str(), &hints, &found);
    if (rc != 0 || found == nullptr) {
      throw ConfigError("cannot listen on " + where + ": " + ::gai_strerror(rc));
    }
    std::string failure;
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        failure = std::strerror(errno);
        continue;
      }
      int on = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
        listen_fd_ = fd;
        break;
      }
      failure = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    if (listen_fd_ < 0) throw ConfigError("cannot listen on " + where + ": " + failure);
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
    port_ = bound.ss_family == AF_INET6
                ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    spdlog::info("tds: listening on {}:{}", options_.listen_address, port_);
  }

  void AcceptLoop() {
    int accepted = 0;
    while (!stopping_) {
      sockaddr_storage peer{};
      socklen_t length = sizeof(peer);
      int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
      if (fd < 0) {
        if (stopping_) break;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        spdlog::warn("tds: accept failed: {}", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (stopping_) {
        ::close(fd);
        break;
      }
      ReapFinished();
      if (active_.load() >= options_.max_connections) {
        // Refused at once rather than queued: a flood of idle connections must not hold
        // threads the clients that log in need.
        spdlog::warn("tds: refusing {}: {} connections are open, the most served at once",
                     PeerName(peer), options_.max_connections);
        ::close(fd);
        continue;
      }
      int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      if (options_.idle_timeout_seconds > 0) {
        // A client that stops reading for this long loses its connection too.
        timeval timeout{options_.idle_timeout_seconds, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
      }
      SessionOptions session;
      session.spid = static_cast<std::uint16_t>(kFirstSpid + accepted++ % kSpidRange);
      session.log_requests = options_.log_requests;
      session.login_timeout_seconds = options_.login_timeout_seconds;
      session.peer = PeerName(peer);
      session.tls = options_.tls;
      session.force_encryption = options_.force_encryption;
      std::lock_guard lock(mutex_);
      auto& connection = connections_.emplace_back(std::make_unique<Connection>());
      connection->fd = fd;
      Connection* raw = connection.get();
      active_++;
      raw->thread = std::thread([this, raw, session] { Serve(raw, session); });
    }
  }

  void Serve(Connection* connection, const SessionOptions& options) {
    spdlog::debug("tds: connection from {} (spid {})", options.peer, options.spid);
    // OpenSSL writes encrypted replies with send() without MSG_NOSIGNAL; blocked in this thread,
    // a client that vanished makes the write fail with EPIPE instead of killing the process.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    {
      SocketChannel channel(connection->fd, options_.idle_timeout_seconds,
                            options_.send_bytes_per_second);
      Session session(channel, *factory_, options);
      session.Run();
    }
    // Closed here, not when the thread is reaped: a client still sending (a flood, a request
    // past the limit) gets a reset at once instead of a connection that takes no more bytes.
    {
      std::lock_guard lock(mutex_);
      ::close(connection->fd);
      connection->fd = -1;
    }
    active_--;
    connection->finished = true;
  }

  void ReapFinished() {
    std::lock_guard lock(mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->finished) {
        (*it)->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::shared_ptr<QueryHandlerFactory> factory_;
  const ServerOptions options_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> active_{0};
  std::mutex mutex_;
  std::list<std::unique_ptr<Connection>> connections_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
};

TdsServer::TdsServer(std::shared_ptr<QueryHandlerFactory> factory, const ServerOptions& options)
    : impl_(std::make_unique<Impl>(std::move(factory), options)) {}

TdsServer::~TdsServer() { Stop(); }

int TdsServer::port() const { return impl_->port(); }

int TdsServer::connection_count() const { return impl_->connection_count(); }

void TdsServer::Stop() { impl_->Stop(); }

}  // namespace mssql_cdc::tds
