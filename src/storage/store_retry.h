// How long the engine waits before sending a request an object store turned away for now:
// exponential backoff with jitter, capped, for a bounded number of attempts.
#pragma once

#include <chrono>

namespace mssql_cdc::storage {

struct RetryPolicy {
  int attempts = 8;  // including the first
  std::chrono::milliseconds first_delay{100};
  std::chrono::milliseconds max_delay{5000};
};

// The wait before attempt `attempt` (1 for the first retry): a random time between half of
// and all of min(max_delay, first_delay * 2^(attempt-1)).
std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int attempt);

}  // namespace mssql_cdc::storage
