// Who may read what through `mssql-cdc sim serve`: a db owner reads everything; any other
// login reads the catalog functions and procedures, and a change table or a source table only
// with a SELECT grant on it (sim_grants, given by `mssql-cdc sim grant`). Grants are read at
// each check, so one given while a connection is open counts from its next statement.
#pragma once

#include <string_view>

#include "sim/catalog.h"
#include "sim/schema.h"

namespace mssql_cdc::sim_server {

class Access {
 public:
  Access(sim::Catalog& catalog, sim::LoginInfo login)
      : catalog_(catalog), login_(std::move(login)) {}

  const sim::LoginInfo& login() const { return login_; }
  // cdc.<capture_instance>_CT, the instance named as the catalog spells it.
  bool CanReadChangeTable(std::string_view capture_instance);
  bool CanReadTable(const sim::TableName& table);

 private:
  sim::Catalog& catalog_;
  sim::LoginInfo login_;
};

}  // namespace mssql_cdc::sim_server
