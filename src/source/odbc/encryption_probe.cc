#include "source/odbc/encryption_probe.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "tds/packet.h"

namespace mssql_cdc::odbc {
namespace {

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool WaitFor(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, events, 0};
  return poll(&p, 1, static_cast<int>(left.count())) == 1 && (p.revents & events) != 0;
}

bool ReadExactly(int fd, std::uint8_t* out, std::size_t size,
                 std::chrono::steady_clock::time_point deadline) {
  std::size_t got = 0;
  while (got < size) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    const ssize_t n = recv(fd, out + got, size - got, 0);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<tds::Encryption> ServerEncryption(const std::string& host, int port,
                                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return std::nullopt;
  }
  std::optional<tds::Encryption> answer;
  for (addrinfo* a = found; a != nullptr && !answer; a = a->ai_next) {
    Socket s(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol));
    if (s.fd() < 0) continue;
    if (connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    if (!WaitFor(s.fd(), POLLOUT, deadline)) continue;
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) continue;

    const std::string payload = tds::BuildPreloginRequest(tds::Encryption::kOn);
    std::string packet(tds::kPacketHeaderSize, '\0');
    tds::PacketHeader header;
    header.type = static_cast<std::uint8_t>(tds::MessageType::kPrelogin);
    header.status = tds::kStatusEndOfMessage;
    header.length = static_cast<std::uint16_t>(tds::kPacketHeaderSize + payload.size());
    header.packet_id = 1;
    tds::WritePacketHeader(reinterpret_cast<std::uint8_t*>(packet.data()), header);
    packet += payload;
    if (send(s.fd(), packet.data(), packet.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(packet.size())) {
      continue;
    }
    std::uint8_t reply_header[tds::kPacketHeaderSize];
    if (!ReadExactly(s.fd(), reply_header, sizeof(reply_header), deadline)) continue;
    const tds::PacketHeader reply = tds::ParsePacketHeader(reply_header);
    if (reply.type != static_cast<std::uint8_t>(tds::MessageType::kReply) ||
        reply.length <= tds::kPacketHeaderSize) {
      continue;
    }
    std::string body(reply.length - tds::kPacketHeaderSize, '\0');
    if (!ReadExactly(s.fd(), reinterpret_cast<std::uint8_t*>(body.data()), body.size(),
                     deadline)) {
      continue;
    }
    try {
      answer = tds::ParsePrelogin(body).encryption;
    } catch (const std::exception&) {
      // not a PRELOGIN reply: unknown
    }
  }
  freeaddrinfo(found);
  return answer;
}

}  // namespace mssql_cdc::odbc
