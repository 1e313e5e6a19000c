#include "source/max_lsn_cache.h"

namespace mssql_cdc {

std::optional<Lsn> MaxLsnCache::Fresh() {
  std::lock_guard lock(mutex_);
  if (has_answer_ && std::chrono::steady_clock::now() - asked_at_ < freshness_) return answer_;
  return std::nullopt;
}

std::optional<Lsn> MaxLsnCache::Get(Source& source) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (has_answer_ && now - asked_at_ < freshness_) return answer_;
  }
  std::optional<Lsn> answer = source.MaxLsn();
  std::lock_guard lock(mutex_);
  // A slower caller's older answer does not replace a newer one.
  if (!has_answer_ || now >= asked_at_) {
    has_answer_ = true;
    answer_ = answer;
    asked_at_ = now;
  }
  return answer;
}

}  // namespace mssql_cdc
