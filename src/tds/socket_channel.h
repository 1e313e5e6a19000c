// One client's TCP socket as TDS sees it: whole messages in (packets reassembled up to the
// EOM bit), packets out, and a look for an Attention without blocking while a reply streams.
// After AcceptTls the same messages travel encrypted, until StopTls (a login-only
// encryption) or the end.
//
// Reads wait at most the idle timeout (and a deadline, while one is set); writes use MSG_NOSIGNAL, so a client that vanished
// ends its own session (ReplyAborted) instead of killing the process with SIGPIPE. The
// socket is not owned: the server closes it after the session's thread has ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tds/message_writer.h"
#include "tls/tls_connection.h"

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
  // `idle_timeout_seconds` 0: wait forever. `send_bytes_per_second` > 0 paces the sends to
  // that rate (ServerOptions::send_bytes_per_second).
  SocketChannel(int fd, int idle_timeout_seconds, std::int64_t send_bytes_per_second = 0);

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

  // Whether the client's first bytes are a TLS handshake record rather than a TDS packet:
  // a TDS 8.0 (strict) client starts TLS at once. Waits for the first byte within the limits;
  // false when the connection closed or nothing came.
  bool StartsWithTls();

  // Runs the server's side of a TLS handshake and encrypts everything from then on. For TDS
  // 7.x the handshake's records travel inside PRELOGIN packets (`inside_prelogin`); for TDS
  // 8.0 directly on the socket. Throws SourceError naming what failed (the client's alert, a
  // record that is not TLS, the connection closed or the deadline passed midway).
  void AcceptTls(SSL_CTX* context, bool inside_prelogin);
  // Back to plaintext: a client that asked for the login alone to be encrypted.
  void StopTls();
  // "TLSv1.2" while encrypted, else "".
  std::string tls_protocol() const { return tls_ ? tls_->protocol() : std::string(); }
  bool encrypted() const { return tls_ != nullptr; }

  void Send(const iovec* parts, int count) override;
  // Reads a packet that arrived during a reply: true for an Attention. Any other packet,
  // or the connection's end, throws ReplyAborted(kConnectionLost).
  bool AttentionArrived() override;

 private:
  enum class ReadStatus { kOk, kClosed, kTimeout, kDeadlinePassed };
  ReadStatus ReadExact(std::uint8_t* out, std::size_t n);
  // Waits until the socket is readable (within the limits), then reads what is there
  // (`flags` MSG_PEEK: looks at it and leaves it there).
  ReadStatus ReadFromSocket(std::uint8_t* out, std::size_t n, std::size_t* got, int flags = 0);
  void SendRaw(const iovec* parts, int count);
  void SendRaw(const std::string& bytes);
  // How long the next poll may wait: the idle timeout, or less when the deadline is nearer.
  int PollTimeoutMs() const;
  // Sleeps until a link of the send rate would have carried `bytes` more.
  void Pace(std::size_t bytes);

  int fd_;
  int timeout_ms_;
  std::size_t max_message_bytes_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::vector<iovec> unsent_;  // reused by Send for partial writes
  std::int64_t send_rate_;  // bytes a second; 0: unpaced
  std::chrono::steady_clock::time_point paced_until_{};  // when the link has carried all sent
  std::unique_ptr<tls::TlsConnection> tls_;  // set while the connection is encrypted
  std::string plaintext_;  // reused by Send: one message's packets, before encryption
  std::string records_;    // reused: TLS records to send
};

}  // namespace mssql_cdc::tds
