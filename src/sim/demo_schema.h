// The demo schema: dbo.customers, dbo.orders and dbo.order_items, with the column types a
// shop's database has (int and bigint keys, nvarchar, decimal(18,2), datetime2, bit, a
// uniqueidentifier, an nvarchar(max)), and CDC enabled on each with the default capture
// instance names dbo_customers, dbo_orders, dbo_order_items.
#pragma once

#include <vector>

#include "sim/schema.h"

namespace mssql_cdc::sim {

class SimDatabase;

std::vector<TableDef> DemoTables();
// Creates the three tables and enables CDC on each. Throws ConfigError when one exists.
void CreateDemoSchema(SimDatabase& db);

}  // namespace mssql_cdc::sim
