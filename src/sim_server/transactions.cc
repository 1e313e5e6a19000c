#include "sim_server/transactions.h"

#include <algorithm>

#include "sim_server/server_errors.h"

namespace mssql_cdc::sim_server {

void SessionTransactions::BeforeTransactionalStatement() {
  if (implicit_ && count_ == 0) count_ = 1;
}

void SessionTransactions::Begin(std::string_view name) {
  BeforeTransactionalStatement();
  if (count_ == 0) name_ = name;
  ++count_;
}

void SessionTransactions::Commit() {
  if (count_ == 0) throw SqlError(errors::CommitWithoutBegin());
  if (--count_ == 0) End();
}

void SessionTransactions::Rollback(std::string_view name) {
  if (count_ == 0) throw SqlError(errors::RollbackWithoutBegin());
  // Transaction and savepoint names compare exactly, whatever the server's collation.
  if (name.empty() || name == name_) {
    count_ = 0;
    return End();
  }
  // SQL Server rolls back to the latest savepoint of that name and keeps it.
  auto found = std::find(savepoints_.rbegin(), savepoints_.rend(), name);
  if (found == savepoints_.rend()) throw SqlError(errors::NoTransactionOrSavepoint(name));
  savepoints_.erase(found.base(), savepoints_.end());
}

void SessionTransactions::Save(std::string_view name) {
  if (count_ == 0) throw SqlError(errors::SaveWithoutTransaction());
  savepoints_.emplace_back(name);
}

void SessionTransactions::End() {
  name_.clear();
  savepoints_.clear();
}

}  // namespace mssql_cdc::sim_server
