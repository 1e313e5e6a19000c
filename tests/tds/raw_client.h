// A TDS client over a plain socket, for tests that check the server's bytes or misbehave on
// purpose (garbage, dropping mid-result) in ways a driver never would.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tds/packet.h"
#include "tests/tds/login_builder.h"

namespace mssql_cdc::tds::testing {

class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      throw std::runtime_error("cannot connect to the test server");
    }
  }
  ~RawClient() { Close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int fd() const { return fd_; }

  void SendRaw(const std::string& bytes) {
    ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }

  // One message in packets of at most `packet_size` bytes.
  void Send(MessageType type, const std::string& payload, std::size_t packet_size = 4096) {
    const std::size_t chunk = packet_size - kPacketHeaderSize;
    std::size_t offset = 0;
    std::uint8_t id = 1;
    do {
      const std::size_t n = std::min(chunk, payload.size() - offset);
      const bool last = offset + n == payload.size();
      std::string packet(kPacketHeaderSize, '\0');
      WritePacketHeader(reinterpret_cast<std::uint8_t*>(packet.data()),
                        PacketHeader{static_cast<std::uint8_t>(type),
                                     static_cast<std::uint8_t>(last ? kStatusEndOfMessage : 0),
                                     static_cast<std::uint16_t>(n + kPacketHeaderSize), 0, id++});
      packet += payload.substr(offset, n);
      SendRaw(packet);
      offset += n;
    } while (offset < payload.size());
  }

  // The next reply message's payload, its packet headers in `headers`; nullopt when the
  // server closed the connection or nothing came in time.
  std::optional<std::string> Read(std::vector<PacketHeader>* headers = nullptr,
                                  int timeout_ms = 10000) {
    std::string payload;
    while (true) {
      std::string raw;
      if (!ReadExact(kPacketHeaderSize, timeout_ms, &raw)) return std::nullopt;
      PacketHeader header = ParsePacketHeader(reinterpret_cast<const std::uint8_t*>(raw.data()));
      if (headers != nullptr) headers->push_back(header);
      std::string body;
      if (!ReadExact(header.length - kPacketHeaderSize, timeout_ms, &body)) return std::nullopt;
      payload += body;
      if (header.status & kStatusEndOfMessage) return payload;
    }
  }

  // Whether the server closes the connection within `timeout_ms` (data read is dropped).
  bool ClosedByServer(int timeout_ms) {
    char buffer[4096];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return false;
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return true;
    }
  }

  // Some bytes of whatever the server sends; false when nothing comes in time.
  bool ReceiveSome(int timeout_ms = 10000) {
    char buffer[4096];
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    return ::recv(fd_, buffer, sizeof(buffer), 0) > 0;
  }

  // PRELOGIN and LOGIN7; the login reply's payload.
  std::optional<std::string> Login(const std::string& user, const std::string& password,
                                   std::uint32_t packet_size = 4096) {
    Send(MessageType::kPrelogin, BuildPrelogin(0x02));
    if (!Read()) return std::nullopt;
    Send(MessageType::kLogin7, BuildLogin(user, Ucs2(password), "sim", packet_size));
    return Read();
  }

  // A SQL batch with the ALL_HEADERS FreeTDS sends.
  void SendBatch(const std::string& sql, std::size_t packet_size = 4096) {
    Send(MessageType::kSqlBatch,
         Hex("16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 01 00 00 00 00") + Ucs2(sql),
         packet_size);
  }

 private:
  bool ReadExact(std::size_t n, int timeout_ms, std::string* out) {
    out->resize(n);
    std::size_t got = 0;
    while (got < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return false;
      ssize_t r = ::recv(fd_, out->data() + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

  int fd_ = -1;
};

}  // namespace mssql_cdc::tds::testing
