// What a failed ODBC call means for the engine, from its SQLSTATEs and SQL Server error
// numbers: worth retrying on a new connection, or one of the failures the user must act on.
#pragma once

#include <string_view>

#include "source/odbc/diagnostics.h"

namespace mssql_cdc::odbc {

enum class FailureKind {
  kTransient,         // connection lost or refused, timeout, deadlock: retry
  kLoginFailed,       // 18456 / SQLSTATE 28000
  kPermissionDenied,  // 229: SELECT (or EXECUTE) permission denied
  kObjectMissing,     // 208: invalid object name
  kRangePurged,       // 313: the LSN range was cleaned up
  kCertificateRefused,  // the driver does not trust the server's TLS certificate
  kOther,
};

// SQLSTATE class 08 (connection), HYT00 and HYT01 (timeouts), 40001 (deadlock victim).
// Classify also counts deadlocks (1205) and FreeTDS's own network errors (20002-20020 under
// SQLSTATE 01xxx, 08xxx or HYxxx, e.g. 20017 "Unexpected EOF from the server").
bool IsTransientSqlState(std::string_view sqlstate);

// The most specific kind among the failure's records: a login failure reported next to
// 08001 is a login failure, not a connection to retry. `connection_dead`: the driver reports
// the failed call's connection as lost (OdbcConnection::IsDead); a failure that is nothing more
// specific is then transient, since drivers report a dead connection under SQLSTATEs such as
// HY000 ("Unknown error", FreeTDS) that say nothing of it.
FailureKind Classify(const OdbcFailure& failure, bool connection_dead = false);

}  // namespace mssql_cdc::odbc
