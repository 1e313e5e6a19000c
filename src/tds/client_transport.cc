#include "tds/client_transport.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "tds/packet.h"

namespace mssql_cdc::tds {
namespace {

using Clock = ClientTransport::Clock;

constexpr std::size_t kCiphertextChunk = 64 * 1024;

// Waits for `events` until `deadline`; Clock::time_point::max() waits as long as it takes (a
// statement may run long before its first row; TCP keepalives find a server that went away).
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready == 1;
  }
}

Clock::time_point DeadlineAfter(std::chrono::milliseconds timeout) {
  return timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
}

std::string Seconds(std::chrono::milliseconds timeout) {
  return std::to_string(timeout.count() / 1000) + " s";
}

}  // namespace

std::unique_ptr<ClientTransport> ClientTransport::Connect(const std::string& host, int port,
                                                          Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    throw ClientFailure(ClientFailure::Kind::kNetwork, "cannot resolve the server's host name");
  }
  int connected = -1;
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = std::strerror(errno);
      close(fd);
      continue;
    }
    int error = 0;
    socklen_t length = sizeof(error);
    if (!WaitFor(fd, POLLOUT, deadline) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      last_error = error != 0 ? std::strerror(error) : "timed out";
      close(fd);
      continue;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    // A server that vanishes without closing is found within about a minute.
    const int idle = 30, interval = 10, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    connected = fd;
  }
  freeaddrinfo(found);
  if (connected < 0) {
    throw ClientFailure(ClientFailure::Kind::kNetwork, "cannot connect to the server: " + last_error);
  }
  return std::unique_ptr<ClientTransport>(new ClientTransport(connected));
}

ClientTransport::~ClientTransport() {
  if (fd_ >= 0) close(fd_);
}

void ClientTransport::Fail(ClientFailure::Kind kind, const std::string& what) {
  dead_ = true;
  throw ClientFailure(kind, what);
}

void ClientTransport::SendRaw(const std::uint8_t* data, std::size_t size,
                              std::chrono::milliseconds timeout) {
  const auto deadline = DeadlineAfter(timeout);
  std::size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd_, data + sent, size - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      Fail(ClientFailure::Kind::kNetwork,
           std::string("sending to the server failed: ") + std::strerror(errno));
    }
    if (!WaitFor(fd_, POLLOUT, deadline)) {
      Fail(ClientFailure::Kind::kNetwork, "the server took no request for " + Seconds(timeout));
    }
  }
}

void ClientTransport::Send(const std::uint8_t* data, std::size_t size,
                           std::chrono::milliseconds timeout) {
  if (tls_ == nullptr) return SendRaw(data, size, timeout);
  try {
    tls_->Write(data, size);
  } catch (const SourceError& e) {
    Fail(ClientFailure::Kind::kProtocol, e.what());
  }
  records_.clear();
  tls_->TakeOutput(&records_);
  SendRaw(reinterpret_cast<const std::uint8_t*>(records_.data()), records_.size(), timeout);
}

void ClientTransport::WaitReadable(Clock::time_point deadline, std::chrono::milliseconds timeout) {
  // Only the time nothing was there to read counts as waiting on the network.
  const auto started = Clock::now();
  const bool ready = WaitFor(fd_, POLLIN, deadline);
  waited_ += Clock::now() - started;
  if (!ready) Fail(ClientFailure::Kind::kNetwork, "the server sent nothing for " + Seconds(timeout));
}

std::size_t ClientTransport::ReceiveRaw(std::uint8_t* out, std::size_t size,
                                        std::chrono::milliseconds timeout) {
  std::optional<Clock::time_point> deadline;
  for (;;) {
    const ssize_t got = recv(fd_, out, size, 0);
    if (got > 0) return static_cast<std::size_t>(got);
    if (got == 0) Fail(ClientFailure::Kind::kNetwork, "the server closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      Fail(ClientFailure::Kind::kNetwork,
           std::string("reading from the server failed: ") + std::strerror(errno));
    }
    if (!deadline) deadline = DeadlineAfter(timeout);
    WaitReadable(*deadline, timeout);
  }
}

std::size_t ClientTransport::Receive(std::uint8_t* out, std::size_t size,
                                     std::chrono::milliseconds timeout) {
  if (tls_ == nullptr) return ReceiveRaw(out, size, timeout);
  if (ciphertext_ == nullptr && !reads_direct_) ciphertext_.reset(new std::uint8_t[kCiphertextChunk]);
  std::optional<Clock::time_point> deadline;
  for (;;) {
    std::size_t got = 0;
    tls::TlsConnection::ReadResult result;
    try {
      result = tls_->Read(out, size, &got);
    } catch (const SourceError& e) {
      // A connection cut or a record broken mid-stream: retried on a new connection.
      Fail(ClientFailure::Kind::kNetwork, std::string("the encrypted connection broke: ") + e.what());
    }
    switch (result) {
      case tls::TlsConnection::ReadResult::kData:
        return got;
      case tls::TlsConnection::ReadResult::kClosed:
        Fail(ClientFailure::Kind::kNetwork, "the server closed the connection (TLS close_notify)");
      case tls::TlsConnection::ReadResult::kNeedInput:
        break;
    }
    if (reads_direct_) {
      // OpenSSL reads the socket itself; an orderly close surfaces from Read as kClosed or an
      // error, and silence here.
      if (!deadline) deadline = DeadlineAfter(timeout);
      WaitReadable(*deadline, timeout);
      continue;
    }
    const std::size_t more = ReceiveRaw(ciphertext_.get(), kCiphertextChunk, timeout);
    tls_->Feed(ciphertext_.get(), more);
  }
}

std::string ClientTransport::ReceivePreloginMessage(std::chrono::milliseconds timeout) {
  std::string payload;
  for (;;) {
    std::uint8_t header_bytes[kPacketHeaderSize];
    for (std::size_t have = 0; have < kPacketHeaderSize;) {
      have += ReceiveRaw(header_bytes + have, kPacketHeaderSize - have, timeout);
    }
    const PacketHeader header = ParsePacketHeader(header_bytes);
    if (header.type != static_cast<std::uint8_t>(MessageType::kPrelogin) ||
        header.length < kPacketHeaderSize) {
      Fail(ClientFailure::Kind::kProtocol,
           "the server sent a TDS message of type " + std::to_string(header.type) +
               " during the TLS handshake, where PRELOGIN packets carry it");
    }
    const std::size_t at = payload.size();
    payload.resize(at + header.length - kPacketHeaderSize);
    for (std::size_t have = at; have < payload.size();) {
      have += ReceiveRaw(reinterpret_cast<std::uint8_t*>(payload.data()) + have,
                         payload.size() - have, timeout);
    }
    if (header.status & kStatusEndOfMessage) return payload;
  }
}

void ClientTransport::SendHandshakeRecords(const std::string& records, bool inside_prelogin,
                                           std::uint8_t* packet_id,
                                           std::chrono::milliseconds timeout) {
  if (records.empty()) return;
  if (!inside_prelogin) {
    return SendRaw(reinterpret_cast<const std::uint8_t*>(records.data()), records.size(), timeout);
  }
  // Cut into PRELOGIN packets, the last one marked EOM.
  constexpr std::size_t kBody = kDefaultPacketSize - kPacketHeaderSize;
  std::string wire;
  for (std::size_t at = 0; at < records.size(); at += kBody) {
    const std::size_t size = std::min(kBody, records.size() - at);
    PacketHeader header;
    header.type = static_cast<std::uint8_t>(MessageType::kPrelogin);
    header.status = at + size == records.size() ? kStatusEndOfMessage : 0;
    header.length = static_cast<std::uint16_t>(size + kPacketHeaderSize);
    header.packet_id = (*packet_id)++;
    std::uint8_t bytes[kPacketHeaderSize];
    WritePacketHeader(bytes, header);
    wire.append(reinterpret_cast<const char*>(bytes), kPacketHeaderSize);
    wire.append(records, at, size);
  }
  SendRaw(reinterpret_cast<const std::uint8_t*>(wire.data()), wire.size(), timeout);
}

void ClientTransport::StartTls(const tls::ClientContext& context, const std::string& server_name,
                               bool inside_prelogin, std::chrono::milliseconds timeout) {
  auto tls = std::make_unique<tls::TlsConnection>(context, server_name);
  std::uint8_t packet_id = 1;
  std::string records;
  for (;;) {
    bool done = false;
    try {
      done = tls->Handshake();
    } catch (const tls::CertificateRefused& refused) {
      // The alert OpenSSL wrote tells the server why, as a driver's does.
      records.clear();
      tls->TakeOutput(&records);
      try {
        SendHandshakeRecords(records, inside_prelogin, &packet_id, timeout);
      } catch (const ClientFailure&) {
        // The refusal is the failure to report.
      }
      Fail(ClientFailure::Kind::kCertificateRefused, refused.what());
    } catch (const SourceError& e) {
      Fail(ClientFailure::Kind::kProtocol, e.what());
    }
    records.clear();
    tls->TakeOutput(&records);
    SendHandshakeRecords(records, inside_prelogin, &packet_id, timeout);
    if (done) break;
    if (inside_prelogin) {
      const std::string payload = ReceivePreloginMessage(timeout);
      tls->Feed(payload.data(), payload.size());
    } else {
      if (ciphertext_ == nullptr) ciphertext_.reset(new std::uint8_t[kCiphertextChunk]);
      const std::size_t got = ReceiveRaw(ciphertext_.get(), kCiphertextChunk, timeout);
      tls->Feed(ciphertext_.get(), got);
    }
  }
  // Results, the bulk of what a client receives, go from the socket straight to OpenSSL.
  reads_direct_ = tls->ReadDirectlyFrom(fd_);
  tls_ = std::move(tls);
}

}  // namespace mssql_cdc::tds
