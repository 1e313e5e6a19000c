// One client's TCP socket as TDS sees it: whole messages in (packets reassembled up to the
// EOM bit), packets out, and a look for an Attention without blocking while a reply streams.
//
// Reads wait at most the idle timeout; writes use MSG_NOSIGNAL, so a client that vanished
// ends its own session (ReplyAborted) instead of killing the process with SIGPIPE. The
// socket is not owned: the server closes it after the session's thread has ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tds/message_writer.h"

namespace mssql_cdc::tds {

struct Message {
  std::uint8_t type = 0;
  std::uint8_t status = 0;  // of the first packet (e.g. the reset-connection bits)
  std::string payload;
};

class SocketChannel final : public PacketSink {
 public:
  // `idle_timeout_seconds` 0: wait forever.
  SocketChannel(int fd, int idle_timeout_seconds);

  enum class ReadResult { kMessage, kClosed, kIdle };
  // The next whole message. kClosed when the client closed the connection (or it broke),
  // kIdle when nothing came within the idle timeout. Throws SourceError for a malformed
  // packet header or a message over the size limit.
  ReadResult ReadMessage(Message* out);

  void Send(const iovec* parts, int count) override;
  // Reads a packet that arrived during a reply: true for an Attention. Any other packet,
  // or the connection's end, throws ReplyAborted(kConnectionLost).
  bool AttentionArrived() override;

 private:
  enum class ReadStatus { kOk, kClosed, kTimeout };
  ReadStatus ReadExact(std::uint8_t* out, std::size_t n);

  int fd_;
  int timeout_ms_;
  std::vector<iovec> unsent_;  // reused by Send for partial writes
};

}  // namespace mssql_cdc::tds
