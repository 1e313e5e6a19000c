// The odbc backend of Source: a SQL Server (or `mssql-cdc sim serve`) read through unixODBC
// with the statements of statements.h.
//
// The Source keeps one connection for its catalog and LSN questions; every change or
// snapshot reader opens its own, so the Source stays usable while readers run and a reader
// may outlive it. Failures become the engine's errors (failure_errors.h); transient ones are
// retried on a new connection by the RetryPolicy, each retry logged at WARNING.
#pragma once

#include <memory>

#include "core/source_options.h"
#include "source/odbc/retry_policy.h"
#include "source/source.h"

namespace mssql_cdc::odbc {

// Builds the connection string (driver_connection.h) and connects. Throws ConfigError for
// a bad connection string, PermissionError when the login fails, SourceError when the
// server cannot be reached after the retries.
std::unique_ptr<Source> OpenOdbcSource(const SourceOptions& options, const RetryPolicy& retry = {});

// The checks OpenOdbcSource makes before connecting, for failing early: ConfigError.
void CheckOdbcOptions(const SourceOptions& options);

}  // namespace mssql_cdc::odbc
