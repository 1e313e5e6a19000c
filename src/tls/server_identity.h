// What a TLS server shows its clients: a certificate (with the chain that leads to its CA,
// when the file holds one) and the private key that matches it, loaded and checked once when a
// server starts, so that a wrong file is one clear error then rather than a failed handshake
// per connection later.
//
// It holds two configurations of the same identity: TDS 7.x, where the handshake travels in
// PRELOGIN packets and TLS is capped at 1.2 (clients that wrap the handshake break on 1.3's
// last flight), and TDS 8.0 "strict", TLS first, 1.2 or 1.3, offering ALPN "tds/8.0".
// Immutable once made; shared by every connection of a server.
#pragma once

#include <chrono>
#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace mssql_cdc::tls {

class ServerIdentity {
 public:
  // Throws ConfigError, naming the file and what to do, when a file cannot be read, the
  // certificate file holds no PEM certificate, the key file no PEM private key, the key does not
  // belong to the certificate, or the certificate is not valid now (expired, not yet valid).
  static std::shared_ptr<const ServerIdentity> Load(const std::string& certificate_file,
                                                    const std::string& key_file);
  ~ServerIdentity();
  ServerIdentity(const ServerIdentity&) = delete;
  ServerIdentity& operator=(const ServerIdentity&) = delete;

  SSL_CTX* tds7_context() const { return tds7_; }
  SSL_CTX* strict_context() const { return strict_; }
  // The certificate's subject, for the log line of a server that starts ("CN=localhost").
  const std::string& subject() const { return subject_; }
  std::chrono::system_clock::time_point not_after() const { return not_after_; }

 private:
  ServerIdentity() = default;
  SSL_CTX* tds7_ = nullptr;
  SSL_CTX* strict_ = nullptr;
  std::string subject_;
  std::chrono::system_clock::time_point not_after_;
};

}  // namespace mssql_cdc::tls
