// Whether the engine's own TDS reader (tds_change_reader.h) can log in where the user's
// connection string points, and with what: only a plain SQL Server login over TCP without
// encryption, the one case it speaks (decision 0008). Everything else (a DSN, a named
// instance, Encrypt=yes or Driver 18's default, Authentication=..., Trusted_Connection, any
// keyword it does not know) stays with the ODBC driver, and the reason says why.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/source_options.h"
#include "source/odbc/driver_connection.h"
#include "tds/client_connection.h"

namespace mssql_cdc::odbc {

struct TdsLoginChoice {
  std::optional<tds::ClientLogin> login;  // holds the password
  std::string reason;                     // why not, when login is empty; names no value
};

// `driver` is BuildDriverConnection's reading of the same options.
TdsLoginChoice TdsLoginFor(const SourceOptions& options, const DriverConnection& driver);

}  // namespace mssql_cdc::odbc
