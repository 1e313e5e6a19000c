#include "engine/backfill_runner.h"

#include <spdlog/spdlog.h>

#include "delta/table.h"

namespace mssql_cdc {

BackfillRunner::BackfillRunner(BackfillRequest request, DeltaBackfillConfig tables,
                               SourceFactory factory, SourceClock clock,
                               delta::GroupedAppender& facts)
    : request_(std::move(request)), tables_(std::move(tables)),
      sources_(std::move(factory), std::max(1, request_.partitions)), clock_(std::move(clock)),
      facts_(facts) {
  request_.max_waves = 1;  // between waves the runner looks at Stop and at its status
  request_.stop = [this] {
    std::lock_guard lock(mu_);
    return stop_;
  };
  thread_ = std::thread([this] { Run(); });
}

BackfillRunner::~BackfillRunner() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void BackfillRunner::Stop() {
  std::lock_guard lock(mu_);
  stop_ = true;
  cv_.notify_all();
}

bool BackfillRunner::ended() const {
  std::lock_guard lock(mu_);
  return ended_;
}

std::exception_ptr BackfillRunner::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

std::optional<BackfillStatus> BackfillRunner::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void BackfillRunner::Run() {
  std::exception_ptr error;
  try {
    auto first = sources_.Acquire();
    DeltaBackfillTables tables(tables_, delta::DeltaTable::Open(tables_.target), facts_, *first,
                               sources_);
    for (;;) {
      const BackfillStatus status = RunBackfill(request_, *first, sources_, clock_, tables);
      {
        std::unique_lock lock(mu_);
        status_ = status;
        if (stop_ || status.done || status.state == "no_snapshot") break;
        if (status.paused) {
          spdlog::info("backfill of '{}': {} ({}); trying again in {} s", request_.instance.name,
                       status.state, status.reason, kBackfillRetryWait.count());
          cv_.wait_for(lock, kBackfillRetryWait, [this] { return stop_; });
          if (stop_) break;
        }
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("backfill of '{}' into {} failed: {}", request_.instance.name, request_.target,
                  e.what());
    error = std::current_exception();
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard lock(mu_);
  error_ = error;
  ended_ = true;
}

}  // namespace mssql_cdc
