// A native stream's backfill, in the same process as the stream: a thread of its own that
// calls RunBackfill (backfill.h) a wave at a time until the chunked snapshot is done, with
// Sources and a headroom rule of its own (NativeBackfillOptions), so that no second job has
// to be scheduled. A wave waiting for headroom (or for the stream's first facts row) is tried
// again after kBackfillRetryWait. A failure ends the runner; error() reports it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/backfill.h"
#include "engine/delta_backfill_tables.h"
#include "source/open_source.h"
#include "source/source_clock.h"
#include "source/source_pool.h"

namespace mssql_cdc {

inline constexpr std::chrono::seconds kBackfillRetryWait{30};


class BackfillRunner {
 public:
  // Starts the thread. `request` names the stream and its snapshot's table; `tables` is the
  // configuration of the Delta tables it writes (bronze is opened again, apart from the
  // stream's); the Sources come from `factory`, `partitions` of them at most.
  BackfillRunner(BackfillRequest request, DeltaBackfillConfig tables, SourceFactory factory,
                 SourceClock clock, delta::GroupedAppender& facts);
  ~BackfillRunner();  // stops and joins
  BackfillRunner(const BackfillRunner&) = delete;
  BackfillRunner& operator=(const BackfillRunner&) = delete;

  void Stop();
  // Whether the thread ended (done, stopped, or failed).
  bool ended() const;
  std::exception_ptr error() const;
  std::optional<BackfillStatus> status() const;

 private:
  void Run();

  BackfillRequest request_;
  DeltaBackfillConfig tables_;
  SourcePool sources_;
  SourceClock clock_;
  delta::GroupedAppender& facts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool ended_ = false;
  std::exception_ptr error_;
  std::optional<BackfillStatus> status_;
  std::thread thread_;
};

}  // namespace mssql_cdc
