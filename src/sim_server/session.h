// What the statement handlers of one connection share: the login, the connection's own
// read-only SQLite connection to the sim file (with its catalog reader, prepared statements and
// permission checks), a Source over the same file, through which the sim backend answers the
// CDC metadata questions with its own rules, its transaction state and the table variables of
// the batch it runs. Used by the connection's thread only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sim/catalog.h"
#include "sim/sqlite.h"
#include "sim_server/access.h"
#include "sim_server/statement_cache.h"
#include "sim_server/table_variables.h"
#include "sim_server/transactions.h"
#include "source/source.h"

namespace mssql_cdc::sim_server {

// @@SERVERNAME and the server name of the login reply.
inline constexpr std::string_view kSimServerName = "mssql-cdc-sim";

class Session {
 public:
  // Opens the connections; throws SourceError when the file cannot be read as a sim database.
  Session(const std::string& path, std::string database_name, sim::LoginInfo login, int spid);

  const std::string& database_name() const { return database_name_; }
  const sim::LoginInfo& login() const { return access_.login(); }
  int spid() const { return spid_; }

  sim::SqliteDb& db() { return *db_; }
  sim::Catalog& catalog() { return catalog_; }
  Access& access() { return access_; }
  StatementCache& statements() { return statements_; }
  Source& source() { return *source_; }
  SessionTransactions& transactions() { return transactions_; }
  TableVariables& table_variables() { return table_variables_; }
  // Whether the T-SQL front end's SQLite functions are registered on db() (tsql/functions.h).
  bool query_functions_registered() const { return query_functions_registered_; }
  void set_query_functions_registered() { query_functions_registered_ = true; }

 private:
  std::string database_name_;
  int spid_;
  std::shared_ptr<sim::SqliteDb> db_;
  sim::Catalog catalog_;
  Access access_;
  StatementCache statements_;
  std::unique_ptr<Source> source_;
  SessionTransactions transactions_;
  TableVariables table_variables_;
  bool query_functions_registered_ = false;
};

}  // namespace mssql_cdc::sim_server
