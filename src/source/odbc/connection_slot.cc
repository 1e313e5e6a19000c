#include "source/odbc/connection_slot.h"

namespace mssql_cdc::odbc {

std::unique_ptr<OdbcConnection> ConnectionSlot::Take() {
  std::lock_guard lock(mutex_);
  return std::move(idle_);
}

void ConnectionSlot::GiveBack(std::unique_ptr<OdbcConnection> connection) {
  if (!connection) return;
  std::unique_ptr<OdbcConnection> extra;
  {
    std::lock_guard lock(mutex_);
    if (idle_) {
      extra = std::move(connection);  // closed outside the lock
    } else {
      idle_ = std::move(connection);
    }
  }
}

}  // namespace mssql_cdc::odbc
