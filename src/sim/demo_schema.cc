#include "sim/demo_schema.h"

#include "sim/database.h"

namespace mssql_cdc::sim {
namespace {

TableDef Define(const char* name, std::vector<const char*> columns, std::vector<std::string> key) {
  TableDef t;
  t.name = ParseTableName(name);
  for (const char* c : columns) t.columns.push_back(ParseColumnDeclaration(c));
  t.primary_key = std::move(key);
  return t;
}

}  // namespace

std::vector<TableDef> DemoTables() {
  return {
      Define("dbo.customers",
             {"customer_id int not null", "name nvarchar(100) not null", "email nvarchar(200)",
              "country char(2)", "created_at datetime2(7) not null", "is_active bit not null",
              "external_id uniqueidentifier", "notes nvarchar(max)"},
             {"customer_id"}),
      Define("dbo.orders",
             {"order_id bigint not null", "customer_id int not null",
              "order_date datetime2(3) not null", "status varchar(20) not null",
              "total decimal(18,2) not null", "currency char(3)", "shipped bit"},
             {"order_id"}),
      Define("dbo.order_items",
             {"order_id bigint not null", "line_no int not null", "product_code varchar(40) not null",
              "quantity int not null", "unit_price decimal(18,2) not null",
              "discount decimal(5,2)", "description nvarchar(max)"},
             {"order_id", "line_no"}),
  };
}

void CreateDemoSchema(SimDatabase& db) {
  for (const auto& table : DemoTables()) {
    db.CreateTable(table);
    db.EnableCdc(table.name);
  }
}

}  // namespace mssql_cdc::sim
