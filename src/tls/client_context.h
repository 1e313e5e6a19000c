// The client side of TLS for a TDS connection, checking the server's certificate by the rules
// of Microsoft ODBC Driver 18 for SQL Server for the same connection string (decision 0020):
//
// - `kChain`: the chain must lead to a CA OpenSSL trusts (the system store, or the files
//   SSL_CERT_FILE and SSL_CERT_DIR name, as for the driver) and the certificate must carry
//   `expected_host` as a DNS name (subjectAltName, or the CN where it has no DNS name; a
//   wildcard in the leftmost label; case ignored). A host written as an IP address never
//   matches, as with the driver.
// - `kPinned` (ServerCertificate=, honoured in strict mode only): the server's certificate must
//   be the file's, byte for byte; neither chain nor name is checked.
// - `kNone`: nothing is checked (TrustServerCertificate=yes, or a login-only encryption).
//
// A refusal's reason is the driver's wording ("certificate verify failed:subject name does not
// match host name"). Immutable once made; shared by every connection of a source.
#pragma once

#include <memory>
#include <string>

#include "core/errors.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;

namespace mssql_cdc::tls {

struct CertificateRules {
  enum class Check { kNone, kChain, kPinned } check = Check::kChain;
  std::string expected_host;     // kChain: the name the certificate must carry
  std::string pinned_file;       // kPinned: PEM or DER file of the server's certificate
};

class ClientContext {
 public:
  // `strict`: TLS 1.2 or 1.3 offering ALPN "tds/8.0" (TDS 8.0, TLS before PRELOGIN); else TLS
  // 1.2, whose handshake travels inside PRELOGIN packets. Throws ConfigError, with the driver's
  // wording, when the pinned file cannot be read or holds no certificate.
  static std::shared_ptr<const ClientContext> Make(const CertificateRules& rules, bool strict);
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  SSL_CTX* context() const { return context_; }
  const CertificateRules& rules() const { return rules_; }
  bool strict() const { return strict_; }
  // For kPinned: whether `presented` is the pinned certificate.
  bool MatchesPinned(X509* presented) const;

 private:
  ClientContext() = default;
  SSL_CTX* context_ = nullptr;
  X509* pinned_ = nullptr;
  CertificateRules rules_;
  bool strict_ = false;
};

// A handshake a client ended because the server's certificate failed its check; what() is the
// reason as Driver 18 words it.
class CertificateRefused : public SourceError {
 public:
  explicit CertificateRefused(const std::string& reason) : SourceError(reason) {}
};

}  // namespace mssql_cdc::tls
