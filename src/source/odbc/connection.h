// One ODBC connection to SQL Server, open from construction to destruction, in autocommit
// mode. Statements borrow it (statement.h); it is used by one thread at a time.
//
// Connecting uses the final connection string of driver_connection.h and the login
// timeout; a failure throws OdbcFailure for the caller to classify and retry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "source/odbc/driver_connection.h"
#include "source/odbc/odbc_api.h"

namespace mssql_cdc::odbc {

struct ConnectionSettings {
  DriverConnection driver;
  long long login_timeout_seconds = 30;  // 0: no limit
};

class OdbcConnection {
 public:
  explicit OdbcConnection(std::shared_ptr<const ConnectionSettings> settings);
  ~OdbcConnection();
  OdbcConnection(const OdbcConnection&) = delete;
  OdbcConnection& operator=(const OdbcConnection&) = delete;

  SQLHDBC handle() const { return dbc_; }
  // Whether the driver knows the connection to be lost (SQL_ATTR_CONNECTION_DEAD): the
  // server went away, whatever SQLSTATE the failed call reported. A driver that cannot tell
  // answers false.
  bool IsDead() const;
  const ConnectionSettings& settings() const { return *settings_; }
  // Values no diagnostic may show.
  const std::vector<std::string>& secrets() const { return settings_->driver.secrets; }

 private:
  std::shared_ptr<const ConnectionSettings> settings_;
  SQLHDBC dbc_ = SQL_NULL_HDBC;
  bool connected_ = false;
};

}  // namespace mssql_cdc::odbc
