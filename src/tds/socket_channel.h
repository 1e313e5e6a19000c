// One client's TCP socket as TDS sees it: whole messages in (packets reassembled up to the
// EOM bit), packets out, and a look for an Attention without blocking while a reply streams.
//
// Reads wait at most the idle timeout (and a deadline, while one is set); writes use MSG_NOSIGNAL, so a client that vanished
// ends its own session (ReplyAborted) instead of killing the process with SIGPIPE. The
// socket is not owned: the server closes it after the session's thread has ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tds/message_writer.h"

namespace mssql_cdc::tds {

// The largest request accepted after login; far above any statement and its parameters.
inline constexpr std::size_t kMaxRequestBytes = 256u << 20;
// The largest PRELOGIN or LOGIN7 message accepted: LOGIN7's fields are bounded (128
// characters each, SSPI data under 64 KiB), so anything larger is not a login.
inline constexpr std::size_t kMaxLoginMessageBytes = 128u << 10;

struct Message {
  std::uint8_t type = 0;
  std::uint8_t status = 0;  // of the first packet (e.g. the reset-connection bits)
  std::string payload;
};

class SocketChannel final : public PacketSink {
 public:
  // `idle_timeout_seconds` 0: wait forever.
  SocketChannel(int fd, int idle_timeout_seconds);

  enum class ReadResult { kMessage, kClosed, kIdle, kDeadlinePassed };
  // The next whole message. kClosed when the client closed the connection (or it broke),
  // kIdle when nothing came within the idle timeout, kDeadlinePassed when the deadline of
  // SetLimits passed first. Throws SourceError for a malformed packet header or a message
  // over the size limit.
  ReadResult ReadMessage(Message* out);

  // Until changed: messages larger than `max_message_bytes` are refused as they arrive (a
  // client cannot make the server hold more), and reads give up at `deadline` when set.
  void SetLimits(std::size_t max_message_bytes,
                 std::optional<std::chrono::steady_clock::time_point> deadline);

  void Send(const iovec* parts, int count) override;
  // Reads a packet that arrived during a reply: true for an Attention. Any other packet,
  // or the connection's end, throws ReplyAborted(kConnectionLost).
  bool AttentionArrived() override;

 private:
  enum class ReadStatus { kOk, kClosed, kTimeout, kDeadlinePassed };
  ReadStatus ReadExact(std::uint8_t* out, std::size_t n);
  // How long the next poll may wait: the idle timeout, or less when the deadline is nearer.
  int PollTimeoutMs() const;

  int fd_;
  int timeout_ms_;
  std::size_t max_message_bytes_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::vector<iovec> unsent_;  // reused by Send for partial writes
};

}  // namespace mssql_cdc::tds
