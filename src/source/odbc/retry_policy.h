// How transient failures (failure_kind.h) are retried: on a new connection, up to
// `max_retries` times, waiting base_delay, 2 x base_delay, 4 x base_delay, ... each spread
// by up to +-jitter so that readers failing together do not come back together. Each retry
// is logged at WARNING with its SQLSTATE and attempt number.
#pragma once

#include <chrono>
#include <string_view>

#include "source/odbc/diagnostics.h"
#include "source/odbc/failure_errors.h"

namespace mssql_cdc::odbc {

struct RetryPolicy {
  int max_retries = 3;
  std::chrono::milliseconds base_delay{500};
  double jitter = 0.25;  // a fraction of the delay

  // The wait before retry number `retry` (1-based) for a uniform `unit_random` in [0, 1).
  std::chrono::milliseconds DelayBefore(int retry, double unit_random) const;
  // The same with a random draw.
  std::chrono::milliseconds DelayBefore(int retry) const;

  // Logs the retry of `action` after `failure` and sleeps before it.
  void WaitBefore(int retry, const OdbcFailure& failure, std::string_view action) const;

  // After a failed attempt of a read: throws the engine error of `failure` (with the attempts
  // made) when it is not transient, classified with `connection_dead`, or when the retries ran
  // out; otherwise counts the retry in `retries` and waits before it.
  void RetryOrThrow(int& retries, const OdbcFailure& failure, bool connection_dead,
                    FailureContext context) const;
};

}  // namespace mssql_cdc::odbc
