// A certificate authority for tests and trials of encrypted connections: a CA certificate and
// a server certificate it signed for one host name, made in memory, PEM-encoded. What
// `mssql-cdc sim tls-cert` writes; clients that trust the CA certificate accept the server.
// Never meant for production: the CA's key is thrown away and keys are not protected.
#pragma once

#include <chrono>
#include <string>

namespace mssql_cdc::tls {

struct TestCertificates {
  std::string ca_certificate;      // PEM
  std::string server_certificate;  // PEM, the server's certificate followed by the CA's
  std::string server_key;          // PEM, PKCS#8, unencrypted
};

struct TestCertificateRequest {
  // The name clients connect to: a DNS name ("localhost", "sql.example.test") or an IP
  // address; it becomes the subject's CN and the one subjectAltName.
  std::string host;
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
};

// Throws ConfigError for an empty host or one with characters a name cannot hold, or a
// validity that ends before it begins.
TestCertificates MakeTestCertificates(const TestCertificateRequest& request);

}  // namespace mssql_cdc::tls
