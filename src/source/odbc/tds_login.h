// Whether the engine's own TDS reader (tds_change_reader.h) can log in where the user's
// connection string points, and with what: a SQL Server login with a password, or an Entra
// ID access token (the accessToken option, sent in LOGIN7's FEDAUTH feature), over TCP,
// through ODBC Driver 18 with any Encrypt setting (encrypted and checked as the driver would,
// decision 0020), or through FreeTDS without encryption (decision 0008). Everything else (a
// DSN, a named instance, Authentication=..., Trusted_Connection, FreeTDS's encryption, another
// driver's, any keyword it does not know) stays with the ODBC driver, and the reason says why.
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

// `driver` is BuildDriverConnection's reading of the same options. Throws ConfigError, as the
// driver would refuse to connect, when ServerCertificate names no readable certificate.
TdsLoginChoice TdsLoginFor(const SourceOptions& options, const DriverConnection& driver);

}  // namespace mssql_cdc::odbc
