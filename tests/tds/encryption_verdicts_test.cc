// The engine's TDS client and Microsoft ODBC Driver 18 given the same connection string against
// the same server: every row of docs/odbc.md's encryption table, and the cases around it (the
// driver's default, strict mode's pinned certificate and its indifference to
// TrustServerCertificate, a server that forces encryption or has none, a certificate made for
// an address, an expired one). Each row runs through both, and the verdicts must be the same: both
// connect (the engine's client then reads rows over the connection), or both refuse, the
// driver's message carrying the engine's reason (decision 0020).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "source/odbc/driver_connection.h"
#include "source/odbc/tds_login.h"
#include "tds/client_connection.h"
#include "tds/server.h"
#include "tests/tds/canned_handler.h"
#include "tests/tds/odbc_client.h"
#include "tests/testing/test_certificates.h"

namespace mssql_cdc::tds {
namespace {

using namespace testing;
using mssql_cdc::testing::CertificateFiles;

constexpr char kDriver18[] = MSSQL_CDC_DRIVER18;

enum class ServerSetup { kCertificate, kForced, kPlaintext, kForAnAddress, kExpired };
enum class Trust { kTheCa, kAnotherCa, kNothing };

struct Row {
  ServerSetup setup;
  std::string host;      // the Server keyword's host
  std::string settings;  // the rest of the string; {cert} and {other} name certificate files
  Trust trust;
  bool connects;
  // For a refusal: whether the driver's message carries the engine's reason word for word
  // (not where the two only see the server close the connection).
  bool same_reason = true;
};

std::string Describe(const Row& row) {
  const char* setups[] = {"certificate for localhost", "forced encryption", "no TLS",
                          "certificate for 127.0.0.1", "expired certificate"};
  const char* trusts[] = {"the CA trusted", "another CA trusted", "nothing trusted"};
  return std::string(setups[static_cast<int>(row.setup)]) + ", Server=" + row.host + ", " +
         row.settings + ", " + trusts[static_cast<int>(row.trust)];
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

class EncryptionVerdictsTest : public ::testing::Test {
 protected:
  ~EncryptionVerdictsTest() override { ::unsetenv("SSL_CERT_FILE"); }

  void Serve(ServerSetup setup) {
    server_.reset();
    ServerOptions options;
    options.idle_timeout_seconds = 60;
    if (setup == ServerSetup::kExpired) {
      options.tls = LoadACertificateAboutToExpire();
    } else if (setup == ServerSetup::kForAnAddress) {
      options.tls = for_an_address_.Identity();
    } else if (setup != ServerSetup::kPlaintext) {
      options.tls = certificates_.Identity();
    }
    options.force_encryption = setup == ServerSetup::kForced;
    server_ = std::make_unique<TdsServer>(std::make_shared<CannedFactory>(), options);
  }

  // A server refuses to load an expired certificate, so it loads one about to expire and the row
  // runs once it has. Making and loading it can outlast its life on a loaded machine; then the
  // next one lives twice as long.
  std::shared_ptr<const tls::ServerIdentity> LoadACertificateAboutToExpire() {
    for (std::chrono::seconds life(2);; life *= 2) {
      expiring_ = std::make_unique<CertificateFiles>("localhost", -std::chrono::hours(1), life);
      const auto expired_by = std::chrono::system_clock::now() + life + std::chrono::seconds(1);
      try {
        auto identity = expiring_->Identity();
        std::this_thread::sleep_until(expired_by);
        return identity;
      } catch (const ConfigError&) {
        if (life > std::chrono::seconds(60)) throw;
      }
    }
  }

  void TrustFor(const Row& row) {
    const CertificateFiles& ca = row.setup == ServerSetup::kForAnAddress ? for_an_address_
                                 : row.setup == ServerSetup::kExpired   ? *expiring_
                                                                        : certificates_;
    switch (row.trust) {
      case Trust::kTheCa: ::setenv("SSL_CERT_FILE", ca.ca_file().c_str(), 1); break;
      case Trust::kAnotherCa: ::setenv("SSL_CERT_FILE", other_.ca_file().c_str(), 1); break;
      case Trust::kNothing: ::unsetenv("SSL_CERT_FILE"); break;
    }
  }

  std::string ConnectionString(const Row& row) const {
    std::string settings = Replace(row.settings, "{cert}", certificates_.certificate_file());
    settings = Replace(settings, "{other}", other_.certificate_file());
    return "Driver={" + std::string(kDriver18) + "};Server=" + row.host + "," +
           std::to_string(server_->port()) + ";UID=u;PWD=p;Database=sim;" + settings;
  }

  // "" when the driver connected and ran a statement, else its diagnostics.
  std::string ThroughDriver18(const std::string& connection_string) {
    OdbcConnection connection;
    std::vector<OdbcDiagnostic> diagnostics;
    if (!connection.Connect(connection_string, &diagnostics)) return mssql_cdc::tds::testing::Describe(diagnostics);
    OdbcStatement stmt(connection);
    if (!SQL_SUCCEEDED(stmt.ExecDirect("SELECT rows 10"))) return stmt.Errors();
    return "";
  }

  // "" when the engine's client logged in and read 2,000 rows, else its failure.
  std::string ThroughTheEngine(const std::string& connection_string) {
    SourceOptions options;
    options.connection_string = connection_string;
    options.connect_timeout_seconds = 10;
    const odbc::DriverConnection driver = odbc::BuildDriverConnection(
        connection_string, std::nullopt, std::nullopt, {kDriver18});
    const odbc::TdsLoginChoice choice = odbc::TdsLoginFor(options, driver);
    if (!choice.login) return "the engine's reader stepped aside: " + choice.reason;
    try {
      auto connection = ClientConnection::Open(*choice.login);
      connection->ExecuteSql("SELECT rows 2000", {});
      DrainRowsOf(connection->reply());
      return "";
    } catch (const ClientFailure& failure) {
      return failure.what();
    }
  }

  // Reads a reply to its end; the 2,000 rows of (int, nvarchar(100)) fill more than 100 KB.
  static void DrainRowsOf(ReplyStream& reply) {
    std::size_t bytes = 0;
    for (; !reply.AtEnd(); ++bytes) reply.Skip(1);
    if (bytes < 100'000) {
      throw ClientFailure(ClientFailure::Kind::kProtocol, "a reply of " + std::to_string(bytes) + " bytes");
    }
  }

  CertificateFiles certificates_{"localhost"};
  CertificateFiles other_{"localhost"};
  CertificateFiles for_an_address_{"127.0.0.1"};
  std::unique_ptr<CertificateFiles> expiring_;
  std::unique_ptr<TdsServer> server_;
};

TEST_F(EncryptionVerdictsTest, TheEnginesClientConnectsWhereDriver18DoesAndRefusesWithItsReason) {
  const std::vector<Row> rows = {
      // docs/odbc.md's table, row by row.
      {ServerSetup::kCertificate, "localhost", "Encrypt=yes", Trust::kTheCa, true},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=yes;HostNameInCertificate=localhost", Trust::kTheCa, true},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=yes;TrustServerCertificate=yes", Trust::kNothing, true},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=no", Trust::kNothing, true},
      {ServerSetup::kCertificate, "localhost", "Encrypt=strict;ServerCertificate={cert}", Trust::kNothing, true},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=strict;HostNameInCertificate=localhost", Trust::kTheCa, true},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=yes", Trust::kTheCa, false},
      {ServerSetup::kCertificate, "localhost", "Encrypt=yes", Trust::kAnotherCa, false},
      // Around it.
      {ServerSetup::kCertificate, "localhost", "", Trust::kTheCa, true},
      {ServerSetup::kCertificate, "LOCALHOST", "Encrypt=Mandatory", Trust::kTheCa, true},
      {ServerSetup::kCertificate, "localhost", "Encrypt=yes", Trust::kNothing, false},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=yes;HostNameInCertificate=*.localhost", Trust::kTheCa, false},
      {ServerSetup::kCertificate, "localhost", "Encrypt=strict;TrustServerCertificate=yes", Trust::kAnotherCa, false},
      {ServerSetup::kCertificate, "127.0.0.1", "Encrypt=strict;ServerCertificate={cert}", Trust::kNothing, true},
      {ServerSetup::kCertificate, "localhost", "Encrypt=strict;ServerCertificate={other}", Trust::kTheCa, false},
      {ServerSetup::kCertificate, "localhost", "Encrypt=yes;ServerCertificate={cert}", Trust::kNothing, false},
      {ServerSetup::kCertificate, "localhost", "Encrypt=yes;ServerCertificate={other}", Trust::kTheCa, true},
      {ServerSetup::kForced, "localhost", "Encrypt=no", Trust::kAnotherCa, false},
      {ServerSetup::kForced, "localhost", "Encrypt=no", Trust::kTheCa, true},
      {ServerSetup::kForced, "127.0.0.1", "Encrypt=no;TrustServerCertificate=yes", Trust::kNothing, true},
      {ServerSetup::kPlaintext, "localhost", "Encrypt=yes;TrustServerCertificate=yes", Trust::kNothing, false},
      {ServerSetup::kPlaintext, "localhost", "Encrypt=no", Trust::kNothing, true},
      {ServerSetup::kPlaintext, "localhost", "Encrypt=strict", Trust::kTheCa, false, /*same_reason=*/false},
      {ServerSetup::kForAnAddress, "127.0.0.1", "Encrypt=yes", Trust::kTheCa, false},
      {ServerSetup::kExpired, "localhost", "Encrypt=yes", Trust::kTheCa, false},
      {ServerSetup::kExpired, "localhost", "Encrypt=yes;TrustServerCertificate=yes", Trust::kTheCa, true},
  };
  for (const Row& row : rows) {
    Serve(row.setup);
    TrustFor(row);
    const std::string text = ConnectionString(row);
    const std::string driver = ThroughDriver18(text);
    const std::string engine = ThroughTheEngine(text);
    EXPECT_EQ(driver.empty(), row.connects) << Describe(row) << ": Driver 18 said " << driver;
    EXPECT_EQ(engine.empty(), row.connects) << Describe(row) << ": the engine said " << engine;
    if (!row.connects && row.same_reason && !engine.empty()) {
      EXPECT_NE(driver.find(engine), std::string::npos)
          << Describe(row) << ": Driver 18 said " << driver << "; the engine said " << engine;
    }
  }
}

}  // namespace
}  // namespace mssql_cdc::tds
