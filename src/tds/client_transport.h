// A TDS client's byte stream to one server: a TCP connection, and TLS over it once StartTls
// has run (inside PRELOGIN packets for TDS 7.x, from the first byte for TDS 8.0 strict), until
// StopTls (a login-only encryption) or the end.
//
// Failures are ClientFailure: kNetwork for a connection refused, reset, closed or silent past
// its timeout (the transport is then dead), kCertificateRefused when the server's certificate
// fails the context's check, kProtocol for bytes that are not TLS during a handshake (a
// connection cut or a record broken after it is kNetwork: retried on a new connection). It also
// counts the time spent blocked waiting for the server's bytes, the read's network wait.
// Used by one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tds/client_failure.h"
#include "tls/client_context.h"
#include "tls/tls_connection.h"

namespace mssql_cdc::tds {

class ClientTransport {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects to the first address of `host` that answers before `deadline`.
  static std::unique_ptr<ClientTransport> Connect(const std::string& host, int port,
                                                  Clock::time_point deadline);
  ~ClientTransport();
  ClientTransport(const ClientTransport&) = delete;
  ClientTransport& operator=(const ClientTransport&) = delete;

  // Sends all of `data`, encrypted while TLS is on; waits at most `timeout` for room.
  void Send(const std::uint8_t* data, std::size_t size, std::chrono::milliseconds timeout);
  // Waits for the server's next bytes, at most `timeout` (0: no limit), and reads at least one,
  // at most `size`, decrypted while TLS is on.
  std::size_t Receive(std::uint8_t* out, std::size_t size, std::chrono::milliseconds timeout);

  // Runs the client's side of a TLS handshake with `context`'s checks (it must outlive the
  // transport's TLS); `server_name` goes out as SNI. `inside_prelogin`: the records travel in
  // PRELOGIN packets (TDS 7.x), else directly on the socket.
  void StartTls(const tls::ClientContext& context, const std::string& server_name,
                bool inside_prelogin, std::chrono::milliseconds timeout);
  // Back to plaintext after a login-only encryption.
  void StopTls() {
    tls_.reset();
    reads_direct_ = false;
  }
  bool encrypted() const { return tls_ != nullptr; }
  // "TLSv1.2" while encrypted, else "".
  std::string tls_protocol() const { return tls_ ? tls_->protocol() : std::string(); }

  bool dead() const { return dead_; }
  void MarkDead() { dead_ = true; }
  // Time spent blocked waiting for the server's bytes since the transport was made.
  std::chrono::nanoseconds waited() const { return waited_; }

 private:
  explicit ClientTransport(int fd) : fd_(fd) {}
  void SendRaw(const std::uint8_t* data, std::size_t size, std::chrono::milliseconds timeout);
  // Reads what the socket holds (at least one byte), waiting as Receive does.
  std::size_t ReceiveRaw(std::uint8_t* out, std::size_t size, std::chrono::milliseconds timeout);
  // A handshake's records, in PRELOGIN packets numbered from *packet_id when `inside_prelogin`.
  void SendHandshakeRecords(const std::string& records, bool inside_prelogin,
                            std::uint8_t* packet_id, std::chrono::milliseconds timeout);
  // One PRELOGIN message's payload (TLS handshake records), read in plaintext.
  std::string ReceivePreloginMessage(std::chrono::milliseconds timeout);
  // Waits until the socket is readable, counting the wait; kNetwork past `deadline`.
  void WaitReadable(Clock::time_point deadline, std::chrono::milliseconds timeout);
  [[noreturn]] void Fail(ClientFailure::Kind kind, const std::string& what);

  int fd_ = -1;
  bool dead_ = false;
  std::chrono::nanoseconds waited_{0};
  std::unique_ptr<tls::TlsConnection> tls_;
  bool reads_direct_ = false;  // tls_ reads the socket itself (ReadDirectlyFrom)
  std::string records_;                 // reused: TLS records to send
  std::unique_ptr<std::uint8_t[]> ciphertext_;  // reused: TLS records read from the socket
};

}  // namespace mssql_cdc::tds
