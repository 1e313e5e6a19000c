// One connection's TLS, server or client side, driven by bytes instead of a socket: the caller
// feeds what arrived and sends what it takes out. That lets the TDS layer decide where the
// records travel: inside PRELOGIN packets during a TDS 7.x handshake, directly on the socket
// after it or from the first byte (TDS 8.0 strict).
//
// Used by one thread at a time. Failures (an alert, bytes that are not TLS, a handshake the
// peer gave up on) throw SourceError with OpenSSL's reason; a client that refuses the server's
// certificate throws CertificateRefused (client_context.h) with the driver's wording.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace mssql_cdc::tls {

class ClientContext;

class TlsConnection {
 public:
  // The server side of a connection, with `context`'s identity and versions.
  explicit TlsConnection(SSL_CTX* context);
  // The client side, checking the server's certificate by `client`'s rules (which must outlive
  // the connection); `server_name` goes out as SNI unless it is an IP address.
  TlsConnection(const ClientContext& client, const std::string& server_name);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  // Bytes that arrived from the peer.
  void Feed(const void* data, std::size_t size);
  // Advances the handshake with what was fed: true once it is complete, false while it waits
  // for more of the peer's bytes (send TakeOutput's first).
  bool Handshake();

  enum class ReadResult { kData, kNeedInput, kClosed };
  // After the handshake: plaintext decrypted from what was fed, at most `size` bytes (`*got`).
  // kNeedInput when no whole record is buffered; kClosed when the peer closed TLS.
  ReadResult Read(void* out, std::size_t size, std::size_t* got);
  // Encrypts `size` bytes of plaintext into the output.
  void Write(const void* data, std::size_t size);

  // After the handshake, the bulk of a connection's bytes can skip the memory buffers: records
  // are written straight to the socket `fd` (a server's replies: each Write's records leave in
  // one system call before it returns; the socket must be blocking, a send timeout then fails
  // Write) or read straight from it (a client's results, as many records at a time as have
  // arrived; Read then returns kNeedInput when the socket has nothing yet, and the caller polls
  // it). Reading directly is refused (false) while bytes the peer sent are still buffered.
  void WriteDirectlyTo(int fd);
  bool ReadDirectlyFrom(int fd);

  // Appends the records waiting to be sent to `out` and forgets them.
  void TakeOutput(std::string* out);
  bool HasOutput() const;
  // Plaintext or still-encrypted bytes are buffered: Read may return data without a Feed.
  bool HasBufferedInput() const;

  // "TLSv1.2", and the ALPN protocol chosen ("" when none), after the handshake.
  std::string protocol() const;
  std::string alpn() const;

 private:
  // Throws for an SSL_get_error result that is not a wait for input.
  void Check(int result, const char* during);

  // Makes ssl_ with memory BIOs on both sides.
  void Attach(SSL_CTX* context);
  // After a client's handshake: throws CertificateRefused unless the certificate is the pinned
  // one, for a context that pins it.
  void CheckPinned() const;

  SSL* ssl_ = nullptr;
  const ClientContext* client_ = nullptr;  // set on the client side
  bool writes_direct_ = false;
  // Owned by ssl_.
  BIO* incoming_ = nullptr;
  BIO* outgoing_ = nullptr;
};

}  // namespace mssql_cdc::tls
