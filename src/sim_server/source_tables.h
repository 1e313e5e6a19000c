// The source tables the snapshot and key statements read (answer_snapshot.cc,
// answer_key_stats.cc), found and checked as SQL Server resolves and checks them.
#pragma once

#include <string>

#include "sim/schema.h"
#include "sim_server/session.h"

namespace mssql_cdc::sim_server {

// The table `schema`.`name`; 208 when there is none, 229 when the login may not read it.
sim::TableInfo ReadableTable(Session& session, const std::string& schema, const std::string& name);
// Its column `name`, ignoring case; 207 when it has none.
const sim::ColumnInfo& RequireColumn(const sim::TableInfo& table, const std::string& name);
// The quoted name of the table's data table in the file.
std::string StorageName(const sim::TableInfo& table);

}  // namespace mssql_cdc::sim_server
