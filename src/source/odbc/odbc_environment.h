// The process's one ODBC environment (ODBC 3.8 behaviour), shared by every connection, and
// the drivers unixODBC knows.
#pragma once

#include <string>
#include <vector>

#include "source/odbc/odbc_api.h"

namespace mssql_cdc::odbc {

// Allocated on first use, never freed (connections may close during static destruction).
// Throws SourceError when the driver manager cannot allocate it.
SQLHENV Environment();

// Driver names from SQLDrivers (odbcinst.ini sections), in unixODBC's order.
std::vector<std::string> InstalledDrivers();

}  // namespace mssql_cdc::odbc
