// The server's TLS driven by bytes, against an OpenSSL client in memory that checks the chain
// and the host name as a driver does.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <string>

#include "core/errors.h"
#include "tests/testing/test_certificates.h"
#include "tls/tls_connection.h"

namespace mssql_cdc::tls {
namespace {

using mssql_cdc::testing::CertificateFiles;

// A client over memory BIOs that trusts one CA certificate and expects one host name.
class MemoryClient {
 public:
  MemoryClient(const std::string& trusted_ca_pem, const std::string& host,
               const std::string& alpn = "") {
    context_ = SSL_CTX_new(TLS_client_method());
    BIO* pem = BIO_new_mem_buf(trusted_ca_pem.data(), static_cast<int>(trusted_ca_pem.size()));
    X509* ca = PEM_read_bio_X509(pem, nullptr, nullptr, nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(context_), ca);
    X509_free(ca);
    BIO_free(pem);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(context_);
    SSL_set1_host(ssl_, host.c_str());
    if (!alpn.empty()) {
      std::string wire(1, static_cast<char>(alpn.size()));
      wire += alpn;
      SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                          static_cast<unsigned>(wire.size()));
    }
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in_, -1);
    BIO_set_mem_eof_return(out_, -1);
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_connect_state(ssl_);
  }
  ~MemoryClient() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
  }

  // Runs the handshake against `server` to the end: "" when it succeeded, else the client's
  // reason.
  std::string HandshakeWith(TlsConnection& server) {
    for (int round = 0; round < 20; ++round) {
      const int result = SSL_do_handshake(ssl_);
      Pump(server);
      if (result == 1) {
        // The server finishes once it has the client's last flight.
        server.Handshake();
        Pump(server);
        return "";
      }
      const int error = SSL_get_error(ssl_, result);
      if (error != SSL_ERROR_WANT_READ) {
        const unsigned long code = ERR_get_error();
        ERR_clear_error();
        return code != 0 ? ERR_reason_error_string(code) : "failed";
      }
      server.Handshake();
      Pump(server);
    }
    return "no end";
  }

  void Write(const std::string& text, TlsConnection& server) {
    SSL_write(ssl_, text.data(), static_cast<int>(text.size()));
    Pump(server);
  }
  std::string Read(TlsConnection& server) {
    Pump(server);
    char buffer[4096];
    const int n = SSL_read(ssl_, buffer, sizeof(buffer));
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }
  std::string protocol() const { return SSL_get_version(ssl_); }

 private:
  // Moves the bytes waiting on either side to the other.
  void Pump(TlsConnection& server) {
    char buffer[16384];
    int n;
    while ((n = BIO_read(out_, buffer, sizeof(buffer))) > 0) {
      server.Feed(buffer, static_cast<std::size_t>(n));
    }
    std::string records;
    server.TakeOutput(&records);
    BIO_write(in_, records.data(), static_cast<int>(records.size()));
  }

  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

TEST(TlsConnection, AClientTrustingTheCaConnectsAndBothWaysCarryData) {
  CertificateFiles files("localhost");
  auto identity = files.Identity();
  TlsConnection server(identity->tds7_context());
  MemoryClient client(files.pem().ca_certificate, "localhost");
  ASSERT_EQ("", client.HandshakeWith(server));
  EXPECT_EQ("TLSv1.2", server.protocol()) << "TDS 7.x is capped at TLS 1.2";
  EXPECT_EQ("TLSv1.2", client.protocol());

  client.Write("a login", server);
  char buffer[64];
  std::size_t got = 0;
  ASSERT_EQ(TlsConnection::ReadResult::kData, server.Read(buffer, sizeof(buffer), &got));
  EXPECT_EQ("a login", std::string(buffer, got));
  EXPECT_EQ(TlsConnection::ReadResult::kNeedInput, server.Read(buffer, sizeof(buffer), &got));

  const std::string reply(100'000, 'r');  // more than one record
  server.Write(reply.data(), reply.size());
  std::string received;
  while (received.size() < reply.size()) {
    const std::string part = client.Read(server);
    ASSERT_FALSE(part.empty());
    received += part;
  }
  EXPECT_EQ(reply, received);
}

TEST(TlsConnection, StrictOffersTls13AndChoosesTds8Alpn) {
  CertificateFiles files("localhost");
  auto identity = files.Identity();
  TlsConnection server(identity->strict_context());
  MemoryClient client(files.pem().ca_certificate, "localhost", "tds/8.0");
  ASSERT_EQ("", client.HandshakeWith(server));
  EXPECT_EQ("TLSv1.3", server.protocol());
  EXPECT_EQ("tds/8.0", server.alpn());
}

TEST(TlsConnection, AClientExpectingAnotherHostRefuses) {
  CertificateFiles files("localhost");
  auto identity = files.Identity();
  TlsConnection server(identity->tds7_context());
  MemoryClient client(files.pem().ca_certificate, "sql.example.test");
  EXPECT_EQ("certificate verify failed", client.HandshakeWith(server));
}

TEST(TlsConnection, AClientTrustingAnotherCaRefuses) {
  CertificateFiles files("localhost");
  CertificateFiles other("localhost");
  auto identity = files.Identity();
  TlsConnection server(identity->tds7_context());
  MemoryClient client(other.pem().ca_certificate, "localhost");
  EXPECT_EQ("certificate verify failed", client.HandshakeWith(server));
}

TEST(TlsConnection, BytesThatAreNotTlsFailTheHandshakeWithAReason) {
  CertificateFiles files;
  auto identity = files.Identity();
  TlsConnection server(identity->tds7_context());
  const std::string garbage(64, 'x');
  server.Feed(garbage.data(), garbage.size());
  try {
    server.Handshake();
    FAIL() << "the handshake went on";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("TLS handshake failed: "))
        << e.what();
  }
}

TEST(TlsConnection, AHalfRecordWaitsForTheRest) {
  CertificateFiles files;
  auto identity = files.Identity();
  TlsConnection server(identity->tds7_context());
  // A handshake record header announcing 512 bytes, and only 3 of them.
  const std::string part("\x16\x03\x01\x02\x00\x01\x00\x01", 8);
  server.Feed(part.data(), part.size());
  EXPECT_FALSE(server.Handshake());
  EXPECT_TRUE(server.HasBufferedInput());
}

}  // namespace
}  // namespace mssql_cdc::tls
