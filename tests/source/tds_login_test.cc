// When the engine's own TDS reader may log in for a connection string (decision 0008), and
// with what; and the statement text it sends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/source_options.h"
#include "source/odbc/driver_connection.h"
#include "source/odbc/statements.h"
#include "source/odbc/tds_login.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_certificates.h"
#include "tls/client_context.h"

namespace mssql_cdc::odbc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Encrypt = tds::ClientLogin::Encrypt;
using Check = tls::CertificateRules::Check;

const std::vector<std::string> kOnlyFreeTds = {"FreeTDS"};
const std::vector<std::string> kBoth = {"FreeTDS", "ODBC Driver 18 for SQL Server"};

TdsLoginChoice Choose(const std::string& connection_string,
                      const std::vector<std::string>& drivers = kOnlyFreeTds,
                      std::optional<std::string> user = std::string("reader"),
                      std::optional<std::string> password = std::string("s3cret;pw")) {
  SourceOptions options;
  options.connection_string = connection_string;
  options.user = user;
  options.password = password;
  options.connect_timeout_seconds = 7;
  return TdsLoginFor(options, BuildDriverConnection(connection_string, user, password, drivers));
}

TEST(TdsLoginTest, APlainSqlLoginOverTcpIsTheReaders) {
  const auto choice = Choose("Server=tcp:db.local,14330;Database=sales;Encrypt=no;PacketSize=8192");
  ASSERT_TRUE(choice.login) << choice.reason;
  EXPECT_EQ(choice.login->host, "db.local");
  EXPECT_EQ(choice.login->port, 14330);
  EXPECT_EQ(choice.login->database, "sales");
  EXPECT_EQ(choice.login->user, "reader");
  EXPECT_EQ(choice.login->password, "s3cret;pw");
  EXPECT_EQ(choice.login->packet_size, 8192u);
  EXPECT_EQ(choice.login->timeout, std::chrono::seconds(7));
  // Through FreeTDS with encryption off the driver sends the login plain too.
  EXPECT_EQ(choice.login->encrypt, Encrypt::kNever);
  EXPECT_EQ(choice.login->tls, nullptr);
}

TEST(TdsLoginTest, ThePortComesFromTheServerThePortKeywordOr1433) {
  EXPECT_EQ(Choose("Server=db.local;Port=5000;Encrypt=no").login->port, 5000);
  EXPECT_EQ(Choose("Server=db.local;Encrypt=no").login->port, 1433);
  EXPECT_EQ(Choose("Address=10.0.0.5,1500;Encrypt=no").login->host, "10.0.0.5");
}

// Driver 18's Encrypt settings, and the certificate checks each brings (decision 0020).
TEST(TdsLoginTest, Driver18ConnectionsAreEncryptedAsTheDriverEncryptsThem) {
  struct Case {
    std::string settings;
    Encrypt encrypt;
    Check check;
    std::string expected_host;
  };
  const std::vector<Case> cases = {
      {"", Encrypt::kYes, Check::kChain, "db"},  // the driver's default
      {"Encrypt=yes", Encrypt::kYes, Check::kChain, "db"},
      {"Encrypt=Mandatory", Encrypt::kYes, Check::kChain, "db"},
      {"Encrypt=yes;TrustServerCertificate=YES", Encrypt::kYes, Check::kNone, "db"},
      {"Encrypt=yes;HostNameInCertificate=sql.example.test", Encrypt::kYes, Check::kChain,
       "sql.example.test"},
      {"Encrypt=yes;HostNameInCertificate=", Encrypt::kYes, Check::kChain, "db"},
      // Outside strict mode the driver ignores ServerCertificate.
      {"Encrypt=yes;ServerCertificate=/nowhere.pem", Encrypt::kYes, Check::kChain, "db"},
      {"Encrypt=no", Encrypt::kNo, Check::kChain, "db"},
      {"Encrypt=optional;TrustServerCertificate=yes", Encrypt::kNo, Check::kNone, "db"},
      {"Encrypt=strict", Encrypt::kStrict, Check::kChain, "db"},
      // Strict mode checks whatever TrustServerCertificate says.
      {"Encrypt=strict;TrustServerCertificate=yes", Encrypt::kStrict, Check::kChain, "db"},
  };
  for (const Case& c : cases) {
    const auto choice = Choose("Server=db,1433;" + c.settings, kBoth);
    ASSERT_TRUE(choice.login) << c.settings << ": " << choice.reason;
    EXPECT_EQ(choice.login->encrypt, c.encrypt) << c.settings;
    ASSERT_NE(choice.login->tls, nullptr) << c.settings;
    EXPECT_EQ(choice.login->tls->rules().check, c.check) << c.settings;
    EXPECT_EQ(choice.login->tls->rules().expected_host, c.expected_host) << c.settings;
    EXPECT_EQ(choice.login->tls->strict(), c.encrypt == Encrypt::kStrict) << c.settings;
    // A login-only encryption checks nothing, as the driver's does not.
    if (c.encrypt == Encrypt::kNo) {
      ASSERT_NE(choice.login->login_only_tls, nullptr);
      EXPECT_EQ(choice.login->login_only_tls->rules().check, Check::kNone);
    } else {
      EXPECT_EQ(choice.login->login_only_tls, nullptr) << c.settings;
    }
  }
}

TEST(TdsLoginTest, StrictModePinsTheServerCertificateFileAndRefusesOneItCannotRead) {
  testing::CertificateFiles certificates("db");
  const auto choice =
      Choose("Server=db,1433;Encrypt=strict;ServerCertificate=" + certificates.certificate_file(), kBoth);
  ASSERT_TRUE(choice.login) << choice.reason;
  EXPECT_EQ(choice.login->tls->rules().check, Check::kPinned);
  try {
    Choose("Server=db,1433;Encrypt=strict;ServerCertificate=/nowhere/server.pem", kBoth);
    FAIL() << "a missing ServerCertificate file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Invalid file path for server certificate"));
    EXPECT_THAT(e.what(), HasSubstr("/nowhere/server.pem"));
  }
}

TEST(TdsLoginTest, EverythingElseStaysWithTheDriverAndSaysWhy) {
  struct Case {
    std::string text;
    std::vector<std::string> drivers;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"DSN=prod;Encrypt=no", kOnlyFreeTds, "names a DSN"},
      {"Server=db,1433;Encrypt=yes", kOnlyFreeTds, "encrypted through FreeTDS (Encrypt=yes)"},
      {"Server=db,1433;Encryption=require", kOnlyFreeTds,
       "encrypted through FreeTDS (Encryption=require)"},
      {"Server=db,1433;Encryption=request", kOnlyFreeTds, "encrypt the login (Encryption=request)"},
      {"Driver={ODBC Driver 17 for SQL Server};Server=db,1433;Encrypt=no", kBoth,
       "names the driver ODBC Driver 17 for SQL Server"},
      {"Server=db,1433;Encrypt=true", kBoth, "not one ODBC Driver 18 takes"},
      {"Server=db,1433;Encrypt=yes;TrustServerCertificate=true", kBoth,
       "TrustServerCertificate value is not one ODBC Driver 18 takes"},
      {"Server=db,1433;Encrypt=no;Authentication=ActiveDirectoryPassword", kOnlyFreeTds,
       "sets Authentication, which only the driver reads"},
      {"Server=db,1433;Encrypt=no;Trusted_Connection=yes", kOnlyFreeTds, "Trusted_Connection"},
      {"Server=db\\sales;Encrypt=no", kOnlyFreeTds, "not named by a TCP host and port"},
      {"Server=np:db;Encrypt=no", kOnlyFreeTds, "not named by a TCP host and port"},
      {"Server=(local);Encrypt=no", kOnlyFreeTds, "not named by a TCP host and port"},
      {"Server=db,notaport;Encrypt=no", kOnlyFreeTds, "not named by a TCP host and port"},
  };
  for (const Case& c : cases) {
    const auto choice = Choose(c.text, c.drivers);
    EXPECT_FALSE(choice.login) << c.text;
    EXPECT_THAT(choice.reason, HasSubstr(c.why)) << c.text;
    EXPECT_THAT(choice.reason, Not(HasSubstr("s3cret"))) << c.text;
  }
  const auto no_password = Choose("Server=db,1433;Encrypt=no", kOnlyFreeTds, std::string("reader"),
                                  std::nullopt);
  EXPECT_FALSE(no_password.login);
  EXPECT_THAT(no_password.reason, HasSubstr("not a SQL Server login with a password"));
}

TEST(TdsLoginTest, AnAccessTokenLogsInThroughTheReaderWithoutAUser) {
  SourceOptions options;
  options.connection_string = "Server=db.example.net,1433;Database=sales;Encrypt=yes";
  options.access_token = "eyJ0b2tlbiI6MX0.e30.c2ln";
  const auto choice = TdsLoginFor(
      options, BuildDriverConnection(options.connection_string, std::nullopt, std::nullopt, kBoth,
                                     options.access_token));
  ASSERT_TRUE(choice.login) << choice.reason;
  EXPECT_EQ(choice.login->access_token, options.access_token);
  EXPECT_TRUE(choice.login->user.empty());
  EXPECT_EQ(choice.login->encrypt, Encrypt::kYes);
}

TEST(TdsLoginTest, ALoginInTheConnectionStringServesToo) {
  const auto choice = Choose("Server=db,1433;Encrypt=no;UID=owner;PWD={p;w}", kOnlyFreeTds,
                             std::nullopt, std::nullopt);
  ASSERT_TRUE(choice.login) << choice.reason;
  EXPECT_EQ(choice.login->user, "owner");
  EXPECT_EQ(choice.login->password, "p;w");
}

TEST(NamedParametersTest, NumbersMarkersOutsideNamesAndStrings) {
  EXPECT_EQ(odbc_sql::NamedParameters("SELECT a FROM t WHERE x BETWEEN ? AND ?"),
            "SELECT a FROM t WHERE x BETWEEN @P1 AND @P2");
  EXPECT_EQ(odbc_sql::NamedParameters("SELECT [a?b], 'it''s ?' FROM t WHERE y = ?"),
            "SELECT [a?b], 'it''s ?' FROM t WHERE y = @P1");
  EXPECT_EQ(odbc_sql::NamedParameters("SELECT [x]]?] FROM t WHERE z = ?"), "SELECT [x]]?] FROM t WHERE z = @P1");
  EXPECT_EQ(odbc_sql::NamedParameters("SELECT 1"), "SELECT 1");
}

}  // namespace
}  // namespace mssql_cdc::odbc
