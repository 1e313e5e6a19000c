// Whether a SQL Server offers encryption, asked the way a driver asks: a TDS PRELOGIN over a
// TCP connection of its own, whose reply's ENCRYPTION option says it. A driver that requires
// encryption and meets a server that has none reports only that the connection failed; this
// probe lets the message say why.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "tds/prelogin.h"

namespace mssql_cdc::odbc {

// The server's ENCRYPTION answer; nullopt when it could not be learnt (no connection, no
// reply within `timeout`, not TDS).
std::optional<tds::Encryption> ServerEncryption(const std::string& host, int port,
                                                std::chrono::milliseconds timeout);

}  // namespace mssql_cdc::odbc
