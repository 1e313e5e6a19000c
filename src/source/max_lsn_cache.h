// The source database's max LSN shared by the streams that read it through one pool: asked of
// the server at most once per `freshness`, so that a thousand quiet streams polling once a
// second cost the server a few questions a second, not a thousand.
//
// An answer up to `freshness` old is safe to plan with: a batch then ends at an earlier LSN
// than it might have, and the next poll sees the rest. Thread-safe; the question itself runs
// outside the lock, so a slow server holds up only the callers that need a new answer.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

#include "core/lsn.h"
#include "source/source.h"

namespace mssql_cdc {

class MaxLsnCache {
 public:
  explicit MaxLsnCache(std::chrono::milliseconds freshness) : freshness_(freshness) {}

  // `source`'s MaxLsn(), or the last answer when it is younger than `freshness`.
  std::optional<Lsn> Get(Source& source);
  // The last answer when it is younger than `freshness`; nullopt otherwise (nothing is asked).
  std::optional<Lsn> Fresh();

 private:
  const std::chrono::milliseconds freshness_;
  std::mutex mutex_;
  bool has_answer_ = false;
  std::optional<Lsn> answer_;
  std::chrono::steady_clock::time_point asked_at_{};
};

}  // namespace mssql_cdc
