// The prepared SQLite statements of one connection, kept by their SQL text: a client reads a
// change table range after range with the same columns, and each read then steps a statement
// already prepared. A lease resets its statement when it ends, so that no finished read keeps
// the file's read snapshot open.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "sim/sqlite.h"

namespace mssql_cdc::sim_server {

class StatementLease {
 public:
  explicit StatementLease(sim::Statement& statement) : statement_(&statement) {}
  ~StatementLease() {
    if (statement_ != nullptr) statement_->Reset();
  }
  StatementLease(StatementLease&& other) noexcept : statement_(std::exchange(other.statement_, nullptr)) {}
  StatementLease(const StatementLease&) = delete;
  StatementLease& operator=(const StatementLease&) = delete;
  StatementLease& operator=(StatementLease&&) = delete;

  sim::Statement& operator*() const { return *statement_; }
  sim::Statement* operator->() const { return statement_; }

 private:
  sim::Statement* statement_;
};

class StatementCache {
 public:
  explicit StatementCache(sim::SqliteDb& db, std::size_t capacity = 64)
      : db_(db), capacity_(capacity) {}

  // The statement of `sql`, prepared now or earlier; the least recently used one is dropped
  // when the cache is full. One lease per text at a time.
  StatementLease Prepare(const std::string& sql);

 private:
  sim::SqliteDb& db_;
  std::size_t capacity_;
  std::list<std::pair<std::string, std::unique_ptr<sim::Statement>>> entries_;  // recent first
};

}  // namespace mssql_cdc::sim_server
