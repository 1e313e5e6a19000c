#include "sim_server/access.h"

#include "sim/storage.h"

namespace mssql_cdc::sim_server {

bool Access::CanReadChangeTable(std::string_view capture_instance) {
  return login_.is_db_owner ||
         catalog_.HasGrant(login_.name, sim::ChangeTableStorageName(capture_instance));
}

bool Access::CanReadTable(const sim::TableName& table) {
  return login_.is_db_owner || catalog_.HasGrant(login_.name, table.ToString());
}

}  // namespace mssql_cdc::sim_server
