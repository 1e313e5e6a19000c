#include "sim_server/table_variables.h"

#include "core/ascii.h"
#include "sim/storage.h"
#include "sim_server/server_errors.h"

namespace mssql_cdc::sim_server {
namespace {

// The SQLite affinity that keeps a value of `type` in the form sim/storage.h stores it.
const char* Affinity(const SqlType& type) {
  switch (type.family()) {
    case SqlTypeFamily::kInteger:
      return "INTEGER";
    case SqlTypeFamily::kFloatingPoint:
      return "REAL";
    case SqlTypeFamily::kBinary:
    case SqlTypeFamily::kRowVersion:
      return "BLOB";
    default:
      return "TEXT";
  }
}

}  // namespace

void TableVariables::Declare(const std::string& name, std::vector<tds::ResultColumn> columns) {
  const std::string key = AsciiLower(name);
  if (variables_.contains(key)) {
    throw SqlError(tds::ServerError{134, 1, 15,
                                    "The variable name '" + name +
                                        "' has already been declared. Variable names must be unique "
                                        "within a query batch or stored procedure."});
  }
  TableVariable variable{sim::QuoteIdent("table_variable_" + std::to_string(++next_)), std::move(columns)};
  std::string sql = "CREATE TEMP TABLE " + variable.storage + "(";
  for (std::size_t i = 0; i < variable.columns.size(); ++i) {
    sql += (i ? ", " : "") + sim::QuoteIdent(variable.columns[i].name) + " " + Affinity(variable.columns[i].type);
  }
  db_.Exec(sql + ")");
  variables_.emplace(key, std::move(variable));
}

const TableVariable* TableVariables::Find(const std::string& name) const {
  const auto found = variables_.find(AsciiLower(name));
  return found == variables_.end() ? nullptr : &found->second;
}

void TableVariables::Clear() {
  for (const auto& [name, variable] : variables_) db_.Exec("DROP TABLE IF EXISTS temp." + variable.storage);
  variables_.clear();
}

}  // namespace mssql_cdc::sim_server
