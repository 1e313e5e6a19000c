// How the odbc backend reads failures: which are retried, how long it waits between tries,
// and the engine error each one becomes, with messages that say what to do and never show
// the password. The last test reaches a real (closed) port through FreeTDS.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "core/errors.h"
#include "core/source_options.h"
#include "source/odbc/diagnostics.h"
#include "source/odbc/failure_errors.h"
#include "source/odbc/failure_kind.h"
#include "source/odbc/odbc_source.h"
#include "source/odbc/retry_policy.h"
#include "source/open_source.h"

namespace mssql_cdc::odbc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

OdbcFailure Failure(std::vector<OdbcDiagnostic> diagnostics) {
  return OdbcFailure("SQLExecDirect", std::move(diagnostics));
}

TEST(FailureKindTest, TransientSqlStates) {
  for (const char* state : {"08001", "08S01", "08004", "HYT00", "HYT01", "40001"}) {
    EXPECT_TRUE(IsTransientSqlState(state)) << state;
    EXPECT_EQ(Classify(Failure({{state, 0, "x"}})), FailureKind::kTransient) << state;
  }
  for (const char* state : {"42000", "42S02", "HY000", "28000", "01004", "23000"}) {
    EXPECT_FALSE(IsTransientSqlState(state)) << state;
  }
  EXPECT_EQ(Classify(Failure({{"HY000", 1205, "deadlock victim"}})), FailureKind::kTransient);
  EXPECT_EQ(Classify(Failure({})), FailureKind::kOther);
  EXPECT_EQ(Classify(Failure({{"42000", 102, "Incorrect syntax"}})), FailureKind::kOther);
}

TEST(FailureKindTest, ADeadConnectionIsTransientWhateverItsSqlState) {
  // FreeTDS reports a server that went away between statements as HY000 "Unknown error".
  const OdbcFailure unknown = Failure({{"HY000", 0, "[FreeTDS][SQL Server]Unknown error"}});
  EXPECT_EQ(Classify(unknown), FailureKind::kOther);
  EXPECT_EQ(Classify(unknown, /*connection_dead=*/true), FailureKind::kTransient);
  // What the server said still counts for more than the connection's state.
  EXPECT_EQ(Classify(Failure({{"28000", 18456, "Login failed"}}), true), FailureKind::kLoginFailed);
  EXPECT_EQ(Classify(Failure({{"42000", 229, "denied"}}), true), FailureKind::kPermissionDenied);
  EXPECT_EQ(Classify(Failure({{"42000", 313, "insufficient"}}), true), FailureKind::kRangePurged);
}

TEST(FailureKindTest, TheMostSpecificRecordWins) {
  // FreeTDS reports a refused login as 28000/18456 next to 08001: not something to retry.
  EXPECT_EQ(Classify(Failure({{"08001", 0, "Unable to connect"}, {"28000", 18456, "Login failed"}})),
            FailureKind::kLoginFailed);
  EXPECT_EQ(Classify(Failure({{"42000", 229, "denied"}})), FailureKind::kPermissionDenied);
  EXPECT_EQ(Classify(Failure({{"42S02", 208, "Invalid object name"}})), FailureKind::kObjectMissing);
  EXPECT_EQ(Classify(Failure({{"42000", 313, "insufficient arguments"}})), FailureKind::kRangePurged);
  EXPECT_EQ(Classify(Failure({{"08S01", 0, "link"}, {"42000", 229, "denied"}})),
            FailureKind::kPermissionDenied);
}

template <typename E>
std::string MessageOf(const OdbcFailure& failure, const FailureContext& context) {
  try {
    ThrowEngineError(failure, context);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong class: " << e.what();
    return "";
  }
  return "";
}

TEST(FailureErrorsTest, LoginFailedNamesTheUserNotThePassword) {
  FailureContext context{"connecting to db,1433", std::nullopt, "reader", nullptr, 1};
  const auto failure = Failure({{"28000", 18456, "Login failed for user 'reader'."}});
  EXPECT_THAT(MessageOf<PermissionError>(failure, context),
              HasSubstr("login failed for user 'reader': check user and password"));
}

TEST(FailureErrorsTest, AnUntrustedCertificateSaysHowToTrustItAndIsNotRetried) {
  const auto failure = Failure(
      {{"08001", 0,
        "[Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: [error:0A000086:SSL "
        "routines::certificate verify failed:subject name does not match host name]"},
       {"08001", 0, "[Microsoft][ODBC Driver 18 for SQL Server]Client unable to establish "
                    "connection"}});
  EXPECT_EQ(Classify(failure), FailureKind::kCertificateRefused);
  FailureContext context{"connecting to db,1433", std::nullopt, "reader", nullptr, 1};
  const std::string message = MessageOf<ConfigError>(failure, context);
  EXPECT_THAT(message, HasSubstr("subject name does not match host name"));
  EXPECT_THAT(message, HasSubstr("HostNameInCertificate="));
  EXPECT_THAT(message, HasSubstr("SSL_CERT_FILE"));
}

TEST(FailureErrorsTest, AServerCertificateThatIsNotTheServersIsARefusalToo) {
  for (const char* reason : {"Provided certificate doesn't match with server/peer certificate",
                             "Invalid file path for server certificate"}) {
    const auto failure = Failure(
        {{"08001", -1, std::string("[Microsoft][ODBC Driver 18 for SQL Server]SSL Provider: "
                                   "[error:40000044:lib(128)::reason(68):unexpected error") +
                           reason + "]"}});
    EXPECT_EQ(Classify(failure), FailureKind::kCertificateRefused) << reason;
  }
}

TEST(FailureErrorsTest, PermissionOnAChangeTableNamesTheGrant) {
  FailureContext context{"reading the change rows of capture instance 'dbo_orders'",
                         std::string("dbo_orders"), "login_name",
                         [] { return std::optional<std::string>("app]user"); }, 1};
  const auto failure =
      Failure({{"42000", 229, "The SELECT permission was denied on the object 'dbo_orders_CT'"}});
  EXPECT_THAT(MessageOf<PermissionError>(failure, context),
              HasSubstr("GRANT SELECT ON cdc.[dbo_orders_CT] TO [app]]user];"));
  // Without a database user the login's name is used.
  context.database_user = [] { return std::nullopt; };
  EXPECT_THAT(MessageOf<PermissionError>(failure, context),
              HasSubstr("GRANT SELECT ON cdc.[dbo_orders_CT] TO [login_name];"));
  // A snapshot's source table.
  context.change_table_of.reset();
  context.source_table = "[sales].[order lines]";
  EXPECT_THAT(MessageOf<PermissionError>(failure, context),
              HasSubstr("GRANT SELECT ON [sales].[order lines] TO [login_name];"));
  // Neither: what the login needs in general.
  context.source_table.reset();
  EXPECT_THAT(MessageOf<PermissionError>(failure, context), HasSubstr("db_owner"));
}

TEST(FailureErrorsTest, MissingChangeTablePurgedRangeAndRetriesRunOut) {
  FailureContext context{"reading", std::string("dbo_t"), "", nullptr, 4};
  EXPECT_THAT(MessageOf<NotFoundError>(Failure({{"42S02", 208, "Invalid object name 'cdc.dbo_t_CT'."}}),
                                       context),
              HasSubstr("cdc.[dbo_t_CT] does not exist"));
  EXPECT_THAT(MessageOf<DataLossError>(Failure({{"42000", 313, "insufficient"}}), context),
              AllOf(HasSubstr("purged by CDC cleanup"), HasSubstr("failOnDataLoss=false"),
                    HasSubstr("resnapshot")));
  EXPECT_THAT(MessageOf<SourceError>(Failure({{"08001", 0, "Unable to connect"}}), context),
              AllOf(HasSubstr("after 4 attempts"), HasSubstr("[08001]")));
  EXPECT_THAT(MessageOf<SourceError>(Failure({{"42000", 102, "Incorrect syntax"}}), context),
              HasSubstr("Incorrect syntax"));
}

TEST(DiagnosticsTest, RedactsSecretsFromDriverMessages) {
  EXPECT_EQ(Redact("bad PWD=hunter2; again hunter2", {"hunter2"}), "bad PWD=***; again ***");
  EXPECT_EQ(Redact("a b", {"a"}), "a b");  // too short to tell from ordinary text
}

TEST(RetryPolicyTest, ExponentialWithJitter) {
  RetryPolicy policy;  // 0.5 s, 1 s, 2 s, +-25%
  using std::chrono::milliseconds;
  EXPECT_EQ(policy.DelayBefore(1, 0.5), milliseconds(500));
  EXPECT_EQ(policy.DelayBefore(2, 0.5), milliseconds(1000));
  EXPECT_EQ(policy.DelayBefore(3, 0.5), milliseconds(2000));
  EXPECT_EQ(policy.DelayBefore(1, 0.0), milliseconds(375));
  EXPECT_EQ(policy.DelayBefore(3, 0.999999), milliseconds(2500));
  for (int i = 0; i < 200; ++i) {
    const auto d = policy.DelayBefore(2);
    EXPECT_GE(d, milliseconds(750));
    EXPECT_LE(d, milliseconds(1250));
  }
  RetryPolicy tiny;
  tiny.base_delay = milliseconds(2);
  EXPECT_LE(tiny.DelayBefore(3), milliseconds(10));
}

// A local port nothing listens on: bound, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

TEST(OdbcConnectTest, UnreachablePortIsASourceErrorAfterTheRetries) {
  SourceOptions options;
  options.connection_string = "Server=127.0.0.1," + std::to_string(ClosedPort()) + ";Encrypt=no";
  options.user = "reader";
  options.password = "s3cret-pw";
  options.connect_timeout_seconds = 5;
  RetryPolicy retry;
  retry.base_delay = std::chrono::milliseconds(5);
  const auto start = std::chrono::steady_clock::now();
  try {
    OpenOdbcSource(options, retry);
    FAIL() << "connected to a closed port";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kSource);
    EXPECT_THAT(e.what(), HasSubstr("after 4 attempts"));
    EXPECT_THAT(e.what(), HasSubstr("[08"));
    EXPECT_THAT(e.what(), Not(HasSubstr("s3cret-pw")));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(OdbcConnectTest, FactoryChecksTheStringBeforeConnecting) {
  SourceOptions options;
  options.backend = Backend::kOdbc;
  options.connection_string = "Database=x;PWD=hunter2x";
  try {
    MakeSourceFactory(options);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("connectionString has no Server keyword"));
    EXPECT_THAT(e.what(), Not(HasSubstr("hunter2x")));
  }
  // A string with a server makes a factory; connecting waits for the call.
  options.connection_string = "Server=127.0.0.1," + std::to_string(ClosedPort());
  EXPECT_NO_THROW(MakeSourceFactory(options));
}

}  // namespace
}  // namespace mssql_cdc::odbc
