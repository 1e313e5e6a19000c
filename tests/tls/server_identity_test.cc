// Loading a server's certificate and key: what works, and one clear error for each wrong file.
#include <gtest/gtest.h>

#include <fstream>

#include "core/errors.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_certificates.h"
#include "tls/server_identity.h"
#include "tls/test_authority.h"

namespace mssql_cdc::tls {
namespace {

using mssql_cdc::testing::CertificateFiles;
using mssql_cdc::testing::TempDir;

std::string LoadError(const std::string& certificate, const std::string& key) {
  try {
    ServerIdentity::Load(certificate, key);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(ServerIdentity, LoadsAMadeCertificateAndNamesItsSubject) {
  CertificateFiles files("sql.example.test");
  auto identity = ServerIdentity::Load(files.certificate_file(), files.key_file());
  EXPECT_EQ("CN=sql.example.test,O=mssql-cdc test", identity->subject());
  EXPECT_NE(nullptr, identity->tds7_context());
  EXPECT_NE(nullptr, identity->strict_context());
  EXPECT_GT(identity->not_after(), std::chrono::system_clock::now());
}

TEST(ServerIdentity, AFileThatIsNotACertificateIsRefused) {
  CertificateFiles files;
  const std::string message = LoadError(files.key_file(), files.key_file());
  EXPECT_NE(std::string::npos, message.find("holds no PEM certificate")) << message;
  EXPECT_NE(std::string::npos, message.find(files.key_file())) << message;
}

TEST(ServerIdentity, AKeyOfAnotherCertificateIsRefused) {
  CertificateFiles files;
  CertificateFiles other;
  const std::string message = LoadError(files.certificate_file(), other.key_file());
  EXPECT_NE(std::string::npos, message.find("does not belong to the certificate")) << message;
}

TEST(ServerIdentity, AKeyFileWithoutAKeyIsRefused) {
  CertificateFiles files;
  const std::string message = LoadError(files.certificate_file(), files.ca_file());
  EXPECT_NE(std::string::npos, message.find("holds no unencrypted PEM private key")) << message;
}

TEST(ServerIdentity, AnExpiredCertificateIsRefusedWithItsDate) {
  CertificateFiles files("localhost", -std::chrono::hours(48), -std::chrono::hours(24));
  const std::string message = LoadError(files.certificate_file(), files.key_file());
  EXPECT_NE(std::string::npos, message.find("expired on 20")) << message;
}

TEST(ServerIdentity, ACertificateNotYetValidIsRefused) {
  CertificateFiles files("localhost", std::chrono::hours(24), std::chrono::hours(48));
  const std::string message = LoadError(files.certificate_file(), files.key_file());
  EXPECT_NE(std::string::npos, message.find("is not valid before")) << message;
}

TEST(ServerIdentity, AMissingFileIsNamed) {
  CertificateFiles files;
  const std::string message = LoadError(files.certificate_file() + ".missing", files.key_file());
  EXPECT_NE(std::string::npos, message.find("cannot read the TLS certificate file")) << message;
  EXPECT_NE(std::string::npos, message.find("No such file")) << message;
}

TEST(TestAuthority, RefusesAHostThatIsNoName) {
  TestCertificateRequest request;
  request.not_before = std::chrono::system_clock::now();
  request.not_after = request.not_before + std::chrono::hours(1);
  for (const char* host : {"", "two words", "a/b"}) {
    request.host = host;
    EXPECT_THROW(MakeTestCertificates(request), ConfigError) << host;
  }
  request.host = "localhost";
  request.not_after = request.not_before;
  EXPECT_THROW(MakeTestCertificates(request), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc::tls
