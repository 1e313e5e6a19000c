// The server with a certificate, through the clients users have: FreeTDS (TDS 7.x TLS, the
// login only or everything) and Microsoft ODBC Driver 18 (Encrypt=yes with and without
// validation, HostNameInCertificate, strict), and through raw bytes that break the handshake.
#include <gtest/gtest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tds/prelogin.h"
#include "tds/server.h"
#include "tests/tds/canned_handler.h"
#include "tests/tds/odbc_client.h"
#include "tests/tds/raw_client.h"
#include "tests/testing/test_certificates.h"

namespace mssql_cdc::tds {
namespace {

using namespace testing;
using mssql_cdc::testing::CertificateFiles;

// The driver that PyPI ships for mssql-python; scripts/setup.sh installs it into the venv.
constexpr char kDriver18[] = MSSQL_CDC_DRIVER18;

// Log lines of the server while the object lives. It must outlive the server's threads
// (spdlog's list of sinks is not to be changed while they log): a fixture member declared
// before the server.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256)) {
    spdlog::default_logger()->sinks().push_back(sink_);
    level_ = spdlog::get_level();
    spdlog::set_level(spdlog::level::debug);
  }
  ~LogCapture() {
    spdlog::set_level(level_);
    spdlog::default_logger()->sinks().pop_back();
  }
  bool Saw(const std::string& text) const {
    for (const auto& line : sink_->last_formatted()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  bool WaitFor(const std::string& text) const {
    for (int i = 0; i < 200 && !Saw(text); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return Saw(text);
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  spdlog::level::level_enum level_;
};

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Serve(/*force_encryption=*/false); }

  void Serve(bool force_encryption) {
    server_.reset();
    factory_ = std::make_shared<CannedFactory>();
    ServerOptions options;
    options.idle_timeout_seconds = 60;
    options.tls = certificates_.Identity();
    options.force_encryption = force_encryption;
    server_ = std::make_unique<TdsServer>(factory_, options);
  }

  std::string FreeTds(const std::string& encryption) const {
    return "Driver={FreeTDS};Server=127.0.0.1;Port=" + std::to_string(server_->port()) +
           ";TDS_Version=7.4;UID=u;PWD=p;Database=sim;ClientCharset=UTF-8;Encryption=" +
           encryption;
  }
  std::string Driver18(const std::string& host, const std::string& settings) const {
    return "Driver={" + std::string(kDriver18) + "};Server=" + host + "," +
           std::to_string(server_->port()) + ";UID=u;PWD=p;Database=sim;" + settings;
  }

  // Connects, and reads the megabyte row through the connection: "" when all of it came.
  std::string ConnectAndRead(const std::string& connection_string) {
    OdbcConnection connection;
    std::vector<OdbcDiagnostic> diagnostics;
    if (!connection.Connect(connection_string, &diagnostics)) return Describe(diagnostics);
    OdbcStatement stmt(connection);
    if (!SQL_SUCCEEDED(stmt.ExecDirect("SELECT big"))) return stmt.Errors();
    if (SQLFetch(stmt.handle()) != SQL_SUCCESS) return stmt.Errors();
    const auto text = stmt.Text(1);
    if (!text || *text != CannedHandler::BigText()) return "the big text differs";
    const auto bytes = stmt.Bytes(2);
    if (!bytes || *bytes != CannedHandler::BigBytes()) return "the big bytes differ";
    return "";
  }

  bool WaitForNoConnections() {
    for (int i = 0; i < 200; ++i) {
      if (server_->connection_count() == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  CertificateFiles certificates_{"localhost"};
  LogCapture log_;
  std::shared_ptr<CannedFactory> factory_;
  std::unique_ptr<TdsServer> server_;
};

TEST_F(TlsServerTest, FreeTdsEncryptionRequireEncryptsEverything) {
  EXPECT_EQ("", ConnectAndRead(FreeTds("require")));
  EXPECT_TRUE(log_.Saw("negotiated TLSv1.2 for the whole connection"));
}

TEST_F(TlsServerTest, FreeTdsEncryptionRequestEncryptsTheLoginOnly) {
  EXPECT_EQ("", ConnectAndRead(FreeTds("request")));
  EXPECT_TRUE(log_.Saw("negotiated TLSv1.2 for the login only"));
}

TEST_F(TlsServerTest, FreeTdsWithoutEncryptionStaysPlainUnlessTheServerForcesIt) {
  EXPECT_EQ("", ConnectAndRead(FreeTds("off")));
  Serve(/*force_encryption=*/true);
  EXPECT_NE("", ConnectAndRead(FreeTds("off")));
  EXPECT_TRUE(log_.WaitFor("the client does not support encryption, which this server requires"));
  EXPECT_EQ("", ConnectAndRead(FreeTds("request"))) << "an OFF client is encrypted throughout";
}

TEST_F(TlsServerTest, Driver18TrustingTheServerCertificate) {
  EXPECT_EQ("", ConnectAndRead(Driver18("127.0.0.1", "Encrypt=yes;TrustServerCertificate=yes")));
}

// The packet size the odbc backend asks for; encrypted, the server grants 16383 as SQL Server
// does, since Driver 18 stops reading when a packet spans two TLS records.
TEST_F(TlsServerTest, Driver18WithTheLargestPacketsGetsPacketsThatFitARecord) {
  EXPECT_EQ("", ConnectAndRead(Driver18(
                    "127.0.0.1", "Encrypt=yes;TrustServerCertificate=yes;PacketSize=32767")));
  EXPECT_TRUE(log_.Saw("packet size 16383"));
}

TEST_F(TlsServerTest, Driver18EncryptNoStillEncryptsTheLogin) {
  EXPECT_EQ("", ConnectAndRead(Driver18("127.0.0.1", "Encrypt=no")));
  EXPECT_TRUE(log_.Saw("for the login only"));
}

// Validation against the test CA, which the driver's OpenSSL reads from SSL_CERT_FILE.
class Driver18Validation : public TlsServerTest {
 protected:
  void SetUp() override {
    TlsServerTest::SetUp();
    ::setenv("SSL_CERT_FILE", certificates_.ca_file().c_str(), 1);
  }
  void TearDown() override { ::unsetenv("SSL_CERT_FILE"); }
};

TEST_F(Driver18Validation, TheNameInTheCertificateIsTheServerName) {
  EXPECT_EQ("", ConnectAndRead(Driver18("localhost", "Encrypt=yes")));
}

TEST_F(Driver18Validation, HostNameInCertificateNamesItForAnAddress) {
  EXPECT_EQ("", ConnectAndRead(Driver18("127.0.0.1", "Encrypt=yes;HostNameInCertificate=localhost")));
}

TEST_F(Driver18Validation, AnotherHostNameIsRefusedWithTheDriversReason) {
  const std::string failure = ConnectAndRead(Driver18("127.0.0.1", "Encrypt=yes"));
  EXPECT_NE(std::string::npos, failure.find("subject name does not match host name")) << failure;
  EXPECT_TRUE(WaitForNoConnections());
}

TEST_F(Driver18Validation, ACertificateOfAnotherCaIsRefused) {
  CertificateFiles other("localhost");
  ::setenv("SSL_CERT_FILE", other.ca_file().c_str(), 1);
  const std::string failure = ConnectAndRead(Driver18("localhost", "Encrypt=yes"));
  EXPECT_NE(std::string::npos, failure.find("certificate verify failed")) << failure;
  EXPECT_TRUE(log_.WaitFor("does not trust this server's certificate"));
}

TEST_F(Driver18Validation, StrictWithTheCaAndTheHostName) {
  EXPECT_EQ("", ConnectAndRead(Driver18("127.0.0.1", "Encrypt=strict;HostNameInCertificate=localhost")));
  EXPECT_TRUE(log_.Saw("is encrypted from the start (TLSv1.3)"));
}

TEST_F(TlsServerTest, StrictWithThePinnedServerCertificate) {
  EXPECT_EQ("", ConnectAndRead(Driver18(
                    "localhost", "Encrypt=strict;ServerCertificate=" +
                                     certificates_.certificate_file())));
}

// The Attention a client sends mid-result arrives inside TLS records, which the server must
// decrypt to see it while it streams rows.
TEST_F(TlsServerTest, ACancelMidResultOverTlsStopsTheRowsAndKeepsTheConnection) {
  for (const std::string& connection_string :
       {FreeTds("require"), Driver18("127.0.0.1", "Encrypt=yes;TrustServerCertificate=yes")}) {
    factory_->state.attentions = 0;
    factory_->state.rows_produced = 0;
    OdbcConnection connection;
    std::vector<OdbcDiagnostic> diagnostics;
    ASSERT_TRUE(connection.Connect(connection_string, &diagnostics)) << Describe(diagnostics);
    constexpr std::int64_t kRows = 5'000'000;
    {
      OdbcStatement stmt(connection);
      ASSERT_TRUE(SQL_SUCCEEDED(stmt.ExecDirect("SELECT rows " + std::to_string(kRows))))
          << stmt.Errors();
      for (int i = 0; i < 10; ++i) ASSERT_EQ(SQL_SUCCESS, SQLFetch(stmt.handle()));
      ASSERT_TRUE(SQL_SUCCEEDED(SQLCancel(stmt.handle()))) << stmt.Errors();
    }
    EXPECT_EQ(1, factory_->state.attentions.load()) << connection_string;
    EXPECT_LT(factory_->state.rows_produced.load(), kRows / 10) << connection_string;
    OdbcStatement next(connection);
    ASSERT_TRUE(SQL_SUCCEEDED(next.ExecDirect("SELECT rows 3"))) << next.Errors();
    int n = 0;
    while (SQLFetch(next.handle()) == SQL_SUCCESS) ++n;
    EXPECT_EQ(3, n) << connection_string;
  }
}

TEST_F(TlsServerTest, ATruncatedRecordInPreloginEndsOnlyThatConnection) {
  RawClient broken(server_->port());
  broken.Send(MessageType::kPrelogin, BuildPreloginRequest(Encryption::kOn));
  ASSERT_TRUE(broken.Read().has_value());
  // A handshake record that announces 512 bytes and brings 4, then the end.
  broken.Send(MessageType::kPrelogin, std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc", 9));
  broken.Close();
  EXPECT_TRUE(log_.WaitFor("the client closed the connection during the TLS handshake"));

  RawClient garbage(server_->port());
  garbage.Send(MessageType::kPrelogin, BuildPreloginRequest(Encryption::kOn));
  ASSERT_TRUE(garbage.Read().has_value());
  garbage.Send(MessageType::kPrelogin, std::string(64, 'x'));
  EXPECT_TRUE(garbage.ClosedByServer(5000));
  EXPECT_TRUE(log_.WaitFor("TLS handshake failed: "));

  EXPECT_EQ("", ConnectAndRead(FreeTds("require")));
}

TEST(TlsServerOptions, ForcingEncryptionWithoutACertificateIsRefused) {
  ServerOptions options;
  options.force_encryption = true;
  EXPECT_THROW(TdsServer(std::make_shared<CannedFactory>(), options), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc::tds
