// Finds the simulated objects a statement names, as SQL Server resolves names under its
// default collation: ignoring case. Each returns the object as the catalog spells it.
#pragma once

#include <optional>
#include <string_view>

#include "sim/catalog.h"
#include "sim/schema.h"

namespace mssql_cdc::sim_server {

// The capture instance of change table "<capture_instance>_CT".
std::optional<sim::CaptureInstance> FindChangeTable(sim::Catalog& catalog,
                                                    std::string_view change_table);
std::optional<sim::CaptureInstance> FindCaptureInstance(sim::Catalog& catalog,
                                                        std::string_view name);
std::optional<sim::TableInfo> FindSourceTable(sim::Catalog& catalog, std::string_view schema,
                                              std::string_view table);
// An object name as OBJECT_ID takes it: "[schema].[table]", "schema.table" or "table" (in
// dbo), brackets optional, `]]` an escaped `]`. nullopt when it is not one.
std::optional<sim::TableName> ParseObjectName(std::string_view text);
// Whether "schema.name" (or "name") names an object the simulated server has: a change
// table or a query function of a capture instance, a source table, or a catalog view or
// table of cdc, sys or INFORMATION_SCHEMA.
bool ObjectExists(sim::Catalog& catalog, std::string_view object);

}  // namespace mssql_cdc::sim_server
