#include "tls/tls_connection.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "core/errors.h"
#include "tls/client_context.h"
#include "tls/openssl_errors.h"
#include "tls/tds_names.h"

namespace mssql_cdc::tls {
namespace {

// Records a client may take from the socket in one read (TLS records carry at most 16 KiB).
constexpr std::size_t kClientReadAheadBytes = 256 * 1024;
// What a server's Write collects before it goes to the socket: a message writer's flush (64
// KiB of packets) in one system call instead of one per 16 KiB record.
constexpr int kServerWriteBufferBytes = 256 * 1024;

}  // namespace

void TlsConnection::Attach(SSL_CTX* context) {
  ssl_ = SSL_new(context);
  if (ssl_ == nullptr) throw InternalError(TakeOpenSslErrors("SSL_new failed"));
  incoming_ = BIO_new(BIO_s_mem());
  outgoing_ = BIO_new(BIO_s_mem());
  // An empty input BIO means "wait for more", not end of stream.
  BIO_set_mem_eof_return(incoming_, -1);
  BIO_set_mem_eof_return(outgoing_, -1);
  SSL_set_bio(ssl_, incoming_, outgoing_);
}

TlsConnection::TlsConnection(SSL_CTX* context) {
  Attach(context);
  SSL_set_accept_state(ssl_);
}

TlsConnection::TlsConnection(const ClientContext& client, const std::string& server_name)
    : client_(&client) {
  Attach(client.context());
  // A client reads a stream of large records: fetching as many of them as have arrived in one
  // read, instead of a record's header and then its body, takes a tenth of the system calls.
  // The buffer is sized before the handshake allocates it.
  SSL_set_read_ahead(ssl_, 1);
  SSL_set_default_read_buffer_len(ssl_, kClientReadAheadBytes);
  if (!server_name.empty() && !IsIpAddress(server_name)) {
    SSL_set_tlsext_host_name(ssl_, server_name.c_str());
  }
  SSL_set_connect_state(ssl_);
}

TlsConnection::~TlsConnection() { SSL_free(ssl_); }

void TlsConnection::Feed(const void* data, std::size_t size) {
  if (incoming_ == nullptr) throw InternalError("TLS: bytes fed to a connection that reads its socket");
  if (size != 0) BIO_write(incoming_, data, static_cast<int>(size));
}

void TlsConnection::Check(int result, const char* during) {
  const int error = SSL_get_error(ssl_, result);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    ERR_clear_error();
    return;
  }
  if (error == SSL_ERROR_ZERO_RETURN) {
    throw SourceError(std::string("TLS ") + during + ": the " +
                      (client_ != nullptr ? "server" : "client") + " closed TLS");
  }
  if (client_ != nullptr) {
    const long verdict = SSL_get_verify_result(ssl_);
    if (verdict != X509_V_OK) {
      ERR_clear_error();
      // Driver 18's words for a name that does not match; OpenSSL's for the rest.
      throw CertificateRefused(
          std::string("certificate verify failed:") +
          (verdict == X509_V_ERR_HOSTNAME_MISMATCH ? "subject name does not match host name"
                                                   : X509_verify_cert_error_string(verdict)));
    }
  }
  throw SourceError(std::string("TLS ") + during + " failed: " +
                    TakeOpenSslErrors("the bytes received are not TLS"));
}

bool TlsConnection::Handshake() {
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    CheckPinned();
    return true;
  }
  Check(result, "handshake");
  return false;
}

TlsConnection::ReadResult TlsConnection::Read(void* out, std::size_t size, std::size_t* got) {
  *got = 0;
  std::size_t read = 0;
  const int result = SSL_read_ex(ssl_, out, size, &read);
  if (result == 1) {
    *got = read;
    return ReadResult::kData;
  }
  if (SSL_get_error(ssl_, result) == SSL_ERROR_ZERO_RETURN) return ReadResult::kClosed;
  Check(result, "read");
  return ReadResult::kNeedInput;
}

void TlsConnection::Write(const void* data, std::size_t size) {
  std::size_t written = 0;
  if (size == 0) return;
  const int result = SSL_write_ex(ssl_, data, size, &written);
  // On a blocking socket, a write that would block is a send timeout: the peer stopped reading.
  const auto timed_out = [] {
    ERR_clear_error();
    throw SourceError("TLS write: the peer took no bytes within the send timeout");
  };
  if (result == 1) {
    if (writes_direct_ && BIO_flush(outgoing_) <= 0) {
      if (BIO_should_retry(outgoing_)) timed_out();
      throw SourceError(TakeOpenSslErrors("TLS write: the connection broke"));
    }
    return;
  }
  if (writes_direct_ && SSL_get_error(ssl_, result) == SSL_ERROR_WANT_WRITE) timed_out();
  Check(result, "write");
}

void TlsConnection::WriteDirectlyTo(int fd) {
  BIO* socket = BIO_new_socket(fd, BIO_NOCLOSE);
  if (socket == nullptr) throw InternalError(TakeOpenSslErrors("BIO_new_socket failed"));
  BIO* buffer = BIO_new(BIO_f_buffer());
  if (buffer == nullptr || BIO_set_write_buffer_size(buffer, kServerWriteBufferBytes) != 1) {
    BIO_free(buffer);
    BIO_free(socket);
    throw InternalError(TakeOpenSslErrors("a TLS write buffer could not be made"));
  }
  BIO_push(buffer, socket);
  SSL_set0_wbio(ssl_, buffer);  // frees the memory BIO; ssl_ frees the chain
  outgoing_ = buffer;
  writes_direct_ = true;
}

bool TlsConnection::ReadDirectlyFrom(int fd) {
  if (HasBufferedInput()) return false;
  BIO* socket = BIO_new_socket(fd, BIO_NOCLOSE);
  if (socket == nullptr) throw InternalError(TakeOpenSslErrors("BIO_new_socket failed"));
  SSL_set0_rbio(ssl_, socket);  // frees the memory BIO
  incoming_ = nullptr;
  return true;
}

void TlsConnection::TakeOutput(std::string* out) {
  if (writes_direct_) return;
  const std::size_t pending = BIO_ctrl_pending(outgoing_);
  if (pending == 0) return;
  const std::size_t at = out->size();
  out->resize(at + pending);
  const int read = BIO_read(outgoing_, out->data() + at, static_cast<int>(pending));
  out->resize(at + static_cast<std::size_t>(read > 0 ? read : 0));
}

bool TlsConnection::HasOutput() const { return !writes_direct_ && BIO_ctrl_pending(outgoing_) != 0; }

bool TlsConnection::HasBufferedInput() const {
  return SSL_has_pending(ssl_) == 1 || (incoming_ != nullptr && BIO_ctrl_pending(incoming_) != 0);
}

void TlsConnection::CheckPinned() const {
  if (client_ == nullptr || client_->rules().check != CertificateRules::Check::kPinned) return;
  X509* presented = SSL_get1_peer_certificate(ssl_);
  const bool same = client_->MatchesPinned(presented);
  X509_free(presented);
  if (!same) throw CertificateRefused("Provided certificate doesn't match with server/peer certificate");
}

std::string TlsConnection::protocol() const { return SSL_get_version(ssl_); }

std::string TlsConnection::alpn() const {
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl_, &data, &length);
  return std::string(reinterpret_cast<const char*>(data), length);
}

}  // namespace mssql_cdc::tls
