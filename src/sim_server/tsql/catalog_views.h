// The catalog views of the simulated server as SQLite SELECTs over the sim catalog tables
// (sim/storage.h), each column with the type SQL Server declares for it: sys.databases,
// sys.schemas, sys.tables, cdc.change_tables, cdc.captured_columns, cdc.index_columns,
// cdc.lsn_time_mapping and cdc.ddl_history. Columns a view has in SQL Server but the
// simulator does not model are left out: asking for one is error 207, never a made-up value.
#pragma once

#include <optional>
#include <string_view>

#include "sim_server/session.h"
#include "sim_server/tsql/relation.h"

namespace mssql_cdc::sim_server::tsql {

// The view `schema.name` (names compare ignoring case); nullopt when there is none.
std::optional<Relation> CatalogView(Session& session, std::string_view schema, std::string_view name);

// The schema_id of a schema name as sys.schemas numbers them (dbo 1, guest 2,
// INFORMATION_SCHEMA 3, sys 4, cdc 5, the sim's other schemas from 6 in name order), and the
// SQLite expression of that mapping over a text column.
std::string SchemaIdSql(Session& session, std::string_view name_sql);

// database_id of the simulated database in sys.databases (after master, tempdb, model, msdb).
inline constexpr int kDatabaseId = 5;

}  // namespace mssql_cdc::sim_server::tsql
