#include "tds/socket_channel.h"

#include <thread>

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "tds/packet.h"

namespace mssql_cdc::tds {

SocketChannel::SocketChannel(int fd, int idle_timeout_seconds, std::int64_t send_bytes_per_second)
    : fd_(fd),
      timeout_ms_(idle_timeout_seconds > 0 ? idle_timeout_seconds * 1000 : -1),
      max_message_bytes_(kMaxRequestBytes),
      send_rate_(send_bytes_per_second) {}

void SocketChannel::Pace(std::size_t bytes) {
  if (send_rate_ <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  // The bytes leave once a link of that rate would have carried them, after those before them;
  // an idle connection earns no credit.
  if (paced_until_ < now) paced_until_ = now;
  paced_until_ += std::chrono::microseconds(static_cast<std::int64_t>(bytes) * 1'000'000 / send_rate_);
  std::this_thread::sleep_until(paced_until_);
}

void SocketChannel::SetLimits(std::size_t max_message_bytes,
                              std::optional<std::chrono::steady_clock::time_point> deadline) {
  max_message_bytes_ = max_message_bytes;
  deadline_ = deadline;
}

int SocketChannel::PollTimeoutMs() const {
  if (!deadline_) return timeout_ms_;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        *deadline_ - std::chrono::steady_clock::now())
                        .count();
  const int until_deadline = static_cast<int>(std::max<long long>(0, left));
  return timeout_ms_ < 0 ? until_deadline : std::min(timeout_ms_, until_deadline);
}

SocketChannel::ReadStatus SocketChannel::ReadFromSocket(std::uint8_t* out, std::size_t n,
                                                        std::size_t* got, int flags) {
  *got = 0;
  while (true) {
    if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) {
      return ReadStatus::kDeadlinePassed;
    }
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, PollTimeoutMs());
    if (ready < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::kClosed;
    }
    if (ready == 0) {
      if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) {
        return ReadStatus::kDeadlinePassed;
      }
      return ReadStatus::kTimeout;
    }
    ssize_t r = ::recv(fd_, out, n, flags);
    if (r == 0) return ReadStatus::kClosed;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return ReadStatus::kClosed;
    }
    *got = static_cast<std::size_t>(r);
    return ReadStatus::kOk;
  }
}

SocketChannel::ReadStatus SocketChannel::ReadExact(std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  std::uint8_t records[16 * 1024];
  while (got < n) {
    std::size_t more = 0;
    if (tls_ == nullptr) {
      const ReadStatus status = ReadFromSocket(out + got, n - got, &more);
      if (status != ReadStatus::kOk) return status;
      got += more;
      continue;
    }
    switch (tls_->Read(out + got, n - got, &more)) {
      case tls::TlsConnection::ReadResult::kData:
        got += more;
        continue;
      case tls::TlsConnection::ReadResult::kClosed:
        return ReadStatus::kClosed;
      case tls::TlsConnection::ReadResult::kNeedInput:
        break;
    }
    const ReadStatus status = ReadFromSocket(records, sizeof(records), &more);
    if (status != ReadStatus::kOk) return status;
    tls_->Feed(records, more);
  }
  return ReadStatus::kOk;
}

bool SocketChannel::StartsWithTls() {
  constexpr std::uint8_t kTlsHandshakeRecord = 0x16;
  std::uint8_t first = 0;
  std::size_t got = 0;
  return ReadFromSocket(&first, 1, &got, MSG_PEEK) == ReadStatus::kOk &&
         first == kTlsHandshakeRecord;
}

void SocketChannel::AcceptTls(SSL_CTX* context, bool inside_prelogin) {
  auto tls = std::make_unique<tls::TlsConnection>(context);
  const auto failed = [](ReadStatus status) -> SourceError {
    return SourceError(status == ReadStatus::kClosed
                           ? "the client closed the connection during the TLS handshake "
                             "(a client does that when it does not trust this server's "
                             "certificate, or expects another host name in it)"
                           : "the TLS handshake did not finish in time");
  };
  std::string records;
  std::uint8_t packet_id = 1;
  while (true) {
    const bool done = tls->Handshake();
    records.clear();
    tls->TakeOutput(&records);
    if (inside_prelogin) {
      // The server's handshake records, cut into PRELOGIN packets, the last one marked EOM.
      constexpr std::size_t kBody = kDefaultPacketSize - kPacketHeaderSize;
      for (std::size_t at = 0; at < records.size(); at += kBody) {
        const std::size_t size = std::min(kBody, records.size() - at);
        std::uint8_t header[kPacketHeaderSize];
        PacketHeader h;
        h.type = static_cast<std::uint8_t>(MessageType::kPrelogin);
        h.status = at + size == records.size() ? kStatusEndOfMessage : 0;
        h.length = static_cast<std::uint16_t>(size + kPacketHeaderSize);
        h.packet_id = packet_id++;
        WritePacketHeader(header, h);
        iovec parts[2] = {{header, kPacketHeaderSize}, {records.data() + at, size}};
        SendRaw(parts, 2);
      }
    } else if (!records.empty()) {
      SendRaw(records);
    }
    if (done) break;
    if (inside_prelogin) {
      std::uint8_t raw[kPacketHeaderSize];
      ReadStatus status = ReadExact(raw, kPacketHeaderSize);
      if (status != ReadStatus::kOk) throw failed(status);
      const PacketHeader header = ParsePacketHeader(raw);
      if (header.type != static_cast<std::uint8_t>(MessageType::kPrelogin) ||
          header.length < kPacketHeaderSize) {
        throw SourceError("the client sent a TDS message of type " +
                          std::to_string(header.type) +
                          " during the TLS handshake, where PRELOGIN packets carry it");
      }
      std::string body(header.length - kPacketHeaderSize, '\0');
      status = ReadExact(reinterpret_cast<std::uint8_t*>(body.data()), body.size());
      if (status != ReadStatus::kOk) throw failed(status);
      tls->Feed(body.data(), body.size());
    } else {
      std::uint8_t bytes[16 * 1024];
      std::size_t got = 0;
      const ReadStatus status = ReadFromSocket(bytes, sizeof(bytes), &got);
      if (status != ReadStatus::kOk) throw failed(status);
      tls->Feed(bytes, got);
    }
  }
  // Replies, the bulk of what a server sends, go from OpenSSL straight to the socket.
  tls->WriteDirectlyTo(fd_);
  tls_ = std::move(tls);
}

void SocketChannel::StopTls() { tls_.reset(); }

SocketChannel::ReadResult SocketChannel::ReadMessage(Message* out) {
  out->payload.clear();
  bool first = true;
  while (true) {
    std::uint8_t raw[kPacketHeaderSize];
    ReadStatus status = ReadExact(raw, kPacketHeaderSize);
    if (status == ReadStatus::kDeadlinePassed) return ReadResult::kDeadlinePassed;
    if (status == ReadStatus::kTimeout && first) return ReadResult::kIdle;
    if (status != ReadStatus::kOk) return ReadResult::kClosed;
    const PacketHeader header = ParsePacketHeader(raw);
    if (header.length < kPacketHeaderSize) {
      throw SourceError("malformed TDS packet: length " + std::to_string(header.length));
    }
    if (first) {
      out->type = header.type;
      out->status = header.status;
    } else if (header.type != out->type) {
      throw SourceError("malformed TDS message: a packet of type " +
                        std::to_string(header.type) + " inside a message of type " +
                        std::to_string(out->type));
    }
    const std::size_t body = header.length - kPacketHeaderSize;
    if (out->payload.size() + body > max_message_bytes_) {
      throw SourceError("TDS message of type " + std::to_string(out->type) + " larger than " +
                        std::to_string(max_message_bytes_ >> 10) + " KiB");
    }
    const std::size_t at = out->payload.size();
    out->payload.resize(at + body);
    if (body != 0) {
      status = ReadExact(reinterpret_cast<std::uint8_t*>(out->payload.data()) + at, body);
      if (status == ReadStatus::kDeadlinePassed) return ReadResult::kDeadlinePassed;
      if (status != ReadStatus::kOk) return ReadResult::kClosed;
    }
    first = false;
    if (header.status & kStatusEndOfMessage) return ReadResult::kMessage;
  }
}

void SocketChannel::Send(const iovec* parts, int count) {
  if (tls_ == nullptr) return SendRaw(parts, count);
  // One write of the whole message: records as large as TLS allows, not one per packet part.
  plaintext_.clear();
  for (int i = 0; i < count; ++i) {
    plaintext_.append(static_cast<const char*>(parts[i].iov_base), parts[i].iov_len);
  }
  Pace(plaintext_.size());
  try {
    tls_->Write(plaintext_.data(), plaintext_.size());  // to the socket (AcceptTls)
  } catch (const SourceError& e) {
    spdlog::warn("tds: {}", e.what());
    throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  }
}

void SocketChannel::SendRaw(const std::string& bytes) {
  iovec part{const_cast<char*>(bytes.data()), bytes.size()};
  SendRaw(&part, 1);
}

void SocketChannel::SendRaw(const iovec* parts, int count) {
  if (send_rate_ > 0) {
    std::size_t bytes = 0;
    for (int i = 0; i < count; ++i) bytes += parts[i].iov_len;
    Pace(bytes);
  }
  std::vector<iovec>& rest = unsent_;
  rest.assign(parts, parts + count);
  std::size_t index = 0;
  while (index < rest.size()) {
    msghdr message{};
    message.msg_iov = rest.data() + index;
    message.msg_iovlen = rest.size() - index;
    ssize_t sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      // EAGAIN here means the send timeout passed: the client stopped reading.
      throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
    }
    auto left = static_cast<std::size_t>(sent);
    while (index < rest.size() && left >= rest[index].iov_len) {
      left -= rest[index].iov_len;
      ++index;
    }
    if (index < rest.size()) {
      rest[index].iov_base = static_cast<std::uint8_t*>(rest[index].iov_base) + left;
      rest[index].iov_len -= left;
    }
  }
}

bool SocketChannel::AttentionArrived() {
  std::uint8_t raw[kPacketHeaderSize];
  std::size_t have = 0;
  if (tls_ == nullptr || !tls_->HasBufferedInput()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if ((p.revents & POLLIN) == 0) throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  }
  if (tls_ != nullptr) {
    // Only a whole record says whether a packet came; a part of one waits for the next look.
    std::uint8_t records[4096];
    const ssize_t r = ::recv(fd_, records, sizeof(records), MSG_DONTWAIT);
    if (r == 0) throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
    if (r > 0) tls_->Feed(records, static_cast<std::size_t>(r));
    try {
      const auto result = tls_->Read(raw, kPacketHeaderSize, &have);
      if (result == tls::TlsConnection::ReadResult::kClosed) {
        throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
      }
      if (result == tls::TlsConnection::ReadResult::kNeedInput) return false;
    } catch (const SourceError& e) {
      spdlog::warn("tds: {}", e.what());
      throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
    }
  }
  if (ReadExact(raw + have, kPacketHeaderSize - have) != ReadStatus::kOk) {
    throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  }
  const PacketHeader header = ParsePacketHeader(raw);
  if (header.length < kPacketHeaderSize) {
    throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  }
  std::vector<std::uint8_t> body(header.length - kPacketHeaderSize);
  if (!body.empty() && ReadExact(body.data(), body.size()) != ReadStatus::kOk) {
    throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  }
  if (header.type == static_cast<std::uint8_t>(MessageType::kAttention)) return true;
  spdlog::warn("tds: a client sent a message of type {} while its reply was streaming; closing",
               header.type);
  throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
}

}  // namespace mssql_cdc::tds
