// The table variables of one batch on a connection to `sim serve` (DECLARE @t TABLE(...)), as
// Microsoft's JDBC driver uses one for getColumns: filled by INSERT ... EXEC, read by a SELECT,
// gone when the batch ends, as SQL Server scopes them. Each is a TEMP table of the session's
// SQLite connection (the file itself stays unwritten).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/sqlite.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

struct TableVariable {
  std::string storage;  // the TEMP table, quoted for SQLite
  std::vector<tds::ResultColumn> columns;
};

class TableVariables {
 public:
  explicit TableVariables(sim::SqliteDb& db) : db_(db) {}

  // Throws SqlError 134 when `name` is declared already in this batch.
  void Declare(const std::string& name, std::vector<tds::ResultColumn> columns);
  // nullptr when no variable of that name (ignoring case) is declared.
  const TableVariable* Find(const std::string& name) const;
  // Drops every variable: the end of a batch.
  void Clear();

 private:
  sim::SqliteDb& db_;
  std::map<std::string, TableVariable> variables_;  // by lower-case name
  int next_ = 0;
};

}  // namespace mssql_cdc::sim_server
