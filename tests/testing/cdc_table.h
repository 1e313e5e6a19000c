// Creates a table in a sim database and enables CDC on it (capture instance <schema>_<name>),
// for tests that need a few tables of given columns and key.
#pragma once

#include <string>
#include <vector>

#include "sim/database.h"

namespace mssql_cdc::testing {

inline sim::TableName CreateCdcTable(sim::SimDatabase& db, const std::string& name,
                                     const std::vector<const char*>& columns,
                                     std::vector<std::string> key) {
  sim::TableDef def;
  def.name = sim::ParseTableName(name);
  for (const char* column : columns) def.columns.push_back(sim::ParseColumnDeclaration(column));
  def.primary_key = std::move(key);
  db.CreateTable(def);
  db.EnableCdc(def.name);
  return def.name;
}

}  // namespace mssql_cdc::testing
