#include "sim_server/statement_cache.h"

namespace mssql_cdc::sim_server {

StatementLease StatementCache::Prepare(const std::string& sql) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == sql) {
      entries_.splice(entries_.begin(), entries_, it);
      return StatementLease(*entries_.front().second);
    }
  }
  auto statement = std::make_unique<sim::Statement>(db_, sql);
  entries_.emplace_front(sql, std::move(statement));
  if (entries_.size() > capacity_) entries_.pop_back();
  return StatementLease(*entries_.front().second);
}

}  // namespace mssql_cdc::sim_server
