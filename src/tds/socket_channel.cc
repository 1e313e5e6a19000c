#include "tds/socket_channel.h"

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
namespace {


}  // namespace

SocketChannel::SocketChannel(int fd, int idle_timeout_seconds)
    : fd_(fd),
      timeout_ms_(idle_timeout_seconds > 0 ? idle_timeout_seconds * 1000 : -1),
      max_message_bytes_(kMaxRequestBytes) {}

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

SocketChannel::ReadStatus SocketChannel::ReadExact(std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
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
    ssize_t r = ::recv(fd_, out + got, n - got, 0);
    if (r == 0) return ReadStatus::kClosed;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return ReadStatus::kClosed;
    }
    got += static_cast<std::size_t>(r);
  }
  return ReadStatus::kOk;
}

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
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & POLLIN) == 0) throw ReplyAborted(ReplyAborted::Reason::kConnectionLost);
  std::uint8_t raw[kPacketHeaderSize];
  if (ReadExact(raw, kPacketHeaderSize) != ReadStatus::kOk) {
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
