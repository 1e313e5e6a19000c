#include "source/odbc/retry_policy.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "source/odbc/failure_kind.h"

namespace mssql_cdc::odbc {

std::chrono::milliseconds RetryPolicy::DelayBefore(int retry, double unit_random) const {
  const double exponential =
      static_cast<double>(base_delay.count()) * std::ldexp(1.0, std::clamp(retry, 1, 30) - 1);
  const double spread = 1.0 + jitter * (2.0 * unit_random - 1.0);
  return std::chrono::milliseconds(std::llround(std::max(0.0, exponential * spread)));
}

std::chrono::milliseconds RetryPolicy::DelayBefore(int retry) const {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return DelayBefore(retry, std::uniform_real_distribution<double>(0.0, 1.0)(random));
}

void RetryPolicy::WaitBefore(int retry, const OdbcFailure& failure, std::string_view action) const {
  const auto delay = DelayBefore(retry);
  spdlog::warn("odbc: {} failed with SQLSTATE {} ({}); retry {} of {} on a new connection in {} ms",
               action, failure.sqlstate(), failure.Details(), retry, max_retries, delay.count());
  std::this_thread::sleep_for(delay);
}

void RetryPolicy::RetryOrThrow(int& retries, const OdbcFailure& failure, bool connection_dead,
                               FailureContext context) const {
  if (Classify(failure, connection_dead) != FailureKind::kTransient || retries == max_retries) {
    context.attempts = retries + 1;
    ThrowEngineError(failure, context);
  }
  ++retries;
  WaitBefore(retries, failure, context.action);
}

}  // namespace mssql_cdc::odbc
