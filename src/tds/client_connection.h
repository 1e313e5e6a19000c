// The client side of TDS 7.4 and 8.0, for reading large results without an ODBC driver in
// between: a TCP connection to SQL Server, encrypted as ODBC Driver 18 would encrypt it for the
// same Encrypt setting (decision 0020: TLS inside PRELOGIN, the login alone, or TLS first),
// LOGIN7 with SQL Server authentication, RPC calls of sp_executesql, and the reply read as a
// stream of bytes.
//
// It does exactly that and refuses the rest: a login that needs Kerberos or the driver's own
// token acquisition is the ODBC driver's (decision 0008). Failures are ClientFailure
// (client_failure.h): the network (refused, reset, timed out, closed: worth a retry on a new
// connection), the server's ERROR tokens, encryption the two sides cannot agree on, a
// certificate refused, or a reply that is not TDS. No message holds the password.
//
// A ClientConnection is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tds/client_failure.h"
#include "tds/prelogin.h"
#include "tds/client_transport.h"

namespace mssql_cdc::tds {

struct ClientLogin {
  std::string host;
  int port = 1433;
  std::string user;
  std::string password;  // secret
  // An Entra ID access token (secret): the login is FEDAUTH's security token instead of user
  // and password. Sent only inside TLS: a connection that would send it in plaintext fails
  // with kEncryptionRequired.
  std::optional<std::string> access_token;
  std::string database;
  std::string app_name = "mssql-cdc";
  std::chrono::milliseconds timeout{30'000};  // connecting and logging in
  std::uint32_t packet_size = 32767;

  // How the connection is encrypted: Driver 18's Encrypt keyword, or kNever where the driver
  // it stands in for (FreeTDS with encryption off) never encrypts.
  enum class Encrypt {
    kNever,   // offers ENCRYPT_NOT_SUP; a server that insists is kEncryptionRequired
    kNo,      // the login alone where the server offers (unchecked), all where it insists
    kYes,     // all of it, or kEncryptionUnavailable
    kStrict,  // TLS before the first TDS byte (TDS 8.0)
  } encrypt = Encrypt::kNever;
  // The checks of a connection encrypted throughout; required unless kNever.
  std::shared_ptr<const tls::ClientContext> tls;
  // kNo: the context of a login-only encryption, which checks nothing, as the driver's.
  std::shared_ptr<const tls::ClientContext> login_only_tls;
};

// The payload bytes of one reply message, read from the socket as they are asked for: the
// packet headers are taken out, so a caller sees one contiguous stream of tokens.
class ReplyStream {
 public:
  // Makes at least `n` bytes readable at data(); false when the message ends first.
  bool Have(std::size_t n) {
    return end_ - pos_ >= n || Fill(n);
  }
  // As Have, throwing ClientFailure (kProtocol) when the message ends first.
  const std::uint8_t* Need(std::size_t n) {
    if (!Have(n)) Truncated();
    return buffer_.data() + pos_;
  }
  void Skip(std::size_t n);
  void Advance(std::size_t n) { pos_ += n; }
  const std::uint8_t* data() const { return buffer_.data() + pos_; }

  std::uint8_t U8() { return *Take(1); }
  std::uint16_t U16() {
    const std::uint8_t* p = Take(2);
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  }
  std::uint32_t U32() {
    const std::uint8_t* p = Take(4);
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  }
  std::uint64_t U64() {
    const std::uint64_t low = U32();
    return low | (static_cast<std::uint64_t>(U32()) << 32);
  }
  // A B_VARCHAR or US_VARCHAR (UTF-16 on the wire) as UTF-8.
  std::string BVarChar();
  std::string UsVarChar();

  // Whether the whole reply has been read.
  bool AtEnd();

 private:
  friend class ClientConnection;
  const std::uint8_t* Take(std::size_t n) {
    const std::uint8_t* p = Need(n);
    pos_ += n;
    return p;
  }
  bool Fill(std::size_t n);
  [[noreturn]] void Truncated() const;
  std::string Utf16Chars(std::size_t chars);  // UTF-16LE of `chars` characters, as UTF-8
  void Start(ClientTransport* transport, std::chrono::milliseconds read_timeout);
  // The next bytes from the transport into raw_ after raw_end_.
  void ReceiveRaw();

  ClientTransport* transport_ = nullptr;
  std::chrono::milliseconds read_timeout_{0};
  std::vector<std::uint8_t> buffer_;  // payload bytes; [pos_, end_) unread
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::size_t packet_left_ = 0;  // payload bytes of the current packet still on the socket
  bool last_packet_ = false;     // the current packet ends the message
  bool started_ = false;
  std::vector<std::uint8_t> raw_;  // bytes read from the socket, headers included
  std::size_t raw_pos_ = 0, raw_end_ = 0;
};

class ClientConnection {
 public:
  // Connects and logs in. ClientFailure on failure: kEncryptionRequired when the server will
  // not talk without TLS, kServer for a refused login (18456), kNetwork when unreachable.
  static std::unique_ptr<ClientConnection> Open(const ClientLogin& login);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // A binary(10) or other BIGVARBINARY parameter of ExecuteSql.
  struct BinaryParam {
    std::string name;  // "@P1"
    std::string bytes;
    int declared_length = 10;  // binary(n) in the declaration
  };
  // Sends sp_executesql(sql, "@P1 binary(10), ...", params...); the reply is then read from
  // reply() until it ends. The previous reply must have been read to its end.
  void ExecuteSql(std::string_view sql, const std::vector<BinaryParam>& params);
  ReplyStream& reply() { return reply_; }

  // Whether the connection failed (it must then be closed).
  bool dead() const { return transport_->dead(); }
  // The packet size the server agreed to.
  std::uint32_t packet_size() const { return packet_size_; }
  // "TLSv1.2" when the connection is encrypted after its login, else "".
  std::string tls_protocol() const { return transport_->tls_protocol(); }
  // Time spent blocked waiting for the server's bytes since the connection was opened.
  std::chrono::nanoseconds network_wait() const { return transport_->waited(); }
  // Whether the traffic after the login is encrypted (false after a login-only encryption).
  bool encrypted() const { return transport_->encrypted(); }

 private:
  ClientConnection() = default;
  void Send(std::uint8_t type, const std::vector<std::uint8_t>& payload);
  struct Negotiated {
    bool login_only_tls = false;  // TLS for LOGIN7 alone
    bool fed_auth_echo = false;   // the server's PRELOGIN held FEDAUTHREQUIRED
  };
  // PRELOGIN, and TLS as `login.encrypt` and the server's answer decide.
  Negotiated Negotiate(const ClientLogin& login);
  // TDS 7.x: TLS inside PRELOGIN as the client's setting and the server's ENCRYPTION answer
  // agree; true when it covers the login alone.
  bool StartTlsAsAgreed(const ClientLogin& login, Encryption server);
  void Login(const ClientLogin& login, const Negotiated& negotiated);

  std::unique_ptr<ClientTransport> transport_;
  std::uint32_t packet_size_ = 4096;
  std::chrono::milliseconds timeout_{30'000};
  ReplyStream reply_;
};

// Reads the reply's tokens until its end, throwing ClientFailure (kServer) with the ERROR
// tokens when there were any: for a reply whose rows nobody wants (a login, a SET).
void DrainReply(ReplyStream& reply);

// Skips the body of a token whose type is `token` (read already) and that is neither a row
// nor COLMETADATA; the messages of ERROR tokens go to `errors`. ClientFailure (kProtocol) for
// a token type TDS 7.4 does not have.
void SkipToken(ReplyStream& reply, std::uint8_t token, std::vector<ServerMessage>* errors);

}  // namespace mssql_cdc::tds
