#include "storage/store_retry.h"

#include <algorithm>
#include <random>

namespace mssql_cdc::storage {

std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const int doublings = std::clamp(attempt - 1, 0, 20);
  const auto ceiling = std::min<long long>(policy.max_delay.count(),
                                           policy.first_delay.count() * (1LL << doublings));
  std::uniform_int_distribution<long long> pick(ceiling / 2, std::max<long long>(ceiling, 1));
  return std::chrono::milliseconds(pick(rng));
}

}  // namespace mssql_cdc::storage
