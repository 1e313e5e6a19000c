#include "sim_server/session.h"

#include "source/sim/sim_source.h"

namespace mssql_cdc::sim_server {

Session::Session(const std::string& path, std::string database_name, sim::LoginInfo login,
                 int spid)
    : database_name_(std::move(database_name)),
      spid_(spid),
      db_(sim::SqliteDb::OpenReadOnly(path)),
      catalog_(*db_),
      access_(catalog_, std::move(login)),
      statements_(*db_),
      source_(OpenSimSource(path)),
      table_variables_(*db_) {}

}  // namespace mssql_cdc::sim_server
