// The one idle connection of a Source: its catalog questions and its change readers take it
// in turn, so a Source used by one thread at a time holds one connection to SQL Server rather
// than one per read, and a batch does not log in again for every range. The Source keeps one
// slot for its ODBC connection and one for the connection of the engine's TDS reader.
//
// A taker that finds the slot empty connects anew. A connection is given back only when it is
// known good: after a statement whose results were read to the end, never after a failure or
// from a session whose settings a statement changed (a snapshot read's isolation level). Of
// two given back, the second is closed. Thread-safe; shared by a Source and its readers, so a
// reader may outlive its Source.
#pragma once

#include <memory>
#include <mutex>

#include "source/odbc/connection.h"

namespace mssql_cdc::odbc {

template <typename Connection>
class IdleSlot {
 public:
  // The idle connection, or null.
  std::unique_ptr<Connection> Take() {
    std::lock_guard lock(mutex_);
    return std::move(idle_);
  }

  void GiveBack(std::unique_ptr<Connection> connection) {
    if (!connection) return;
    std::unique_ptr<Connection> extra;  // closed outside the lock
    std::lock_guard lock(mutex_);
    if (idle_) {
      extra = std::move(connection);
    } else {
      idle_ = std::move(connection);
    }
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Connection> idle_;
};

using ConnectionSlot = IdleSlot<OdbcConnection>;

}  // namespace mssql_cdc::odbc
