// PEM files of a test CA and of a server certificate for one host, in a directory that lives as
// long as the object: what the TLS tests give a TdsServer and tell a client to trust.
#pragma once

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "tests/testing/temp_dir.h"
#include "tls/server_identity.h"
#include "tls/test_authority.h"

namespace mssql_cdc::testing {

class CertificateFiles {
 public:
  // Valid from an hour ago for a day, unless told otherwise.
  explicit CertificateFiles(const std::string& host = "localhost",
                            std::chrono::system_clock::duration valid_from = -std::chrono::hours(1),
                            std::chrono::system_clock::duration valid_until = std::chrono::hours(24)) {
    tls::TestCertificateRequest request;
    request.host = host;
    const auto now = std::chrono::system_clock::now();
    request.not_before = now + valid_from;
    request.not_after = now + valid_until;
    pem_ = tls::MakeTestCertificates(request);
    Write(ca_file(), pem_.ca_certificate);
    Write(certificate_file(), pem_.server_certificate);
    Write(key_file(), pem_.server_key);
  }

  std::string ca_file() const { return dir_.path() + "/ca.pem"; }
  std::string certificate_file() const { return dir_.path() + "/server.pem"; }
  std::string key_file() const { return dir_.path() + "/server.key"; }
  const tls::TestCertificates& pem() const { return pem_; }

  std::shared_ptr<const tls::ServerIdentity> Identity() const {
    return tls::ServerIdentity::Load(certificate_file(), key_file());
  }

 private:
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  TempDir dir_;
  tls::TestCertificates pem_;
};

}  // namespace mssql_cdc::testing
