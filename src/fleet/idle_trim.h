// Gives free memory back to the system once a run's streams have been still for a while after
// a change: Arrow's memory pool's (jemalloc, told not to purge as it goes by
// core/run_allocator.h) and the C library's, which keeps a burst's pages for later otherwise
// (decision 0009).
//
// IdleTrim is not thread-safe: one owner polls it, as the run loop does.
#pragma once

#include <chrono>
#include <cstdint>

namespace mssql_cdc {

// Gives what Arrow's default memory pool and the C library's malloc hold unused back to the
// system, now.
void ReleaseFreeMemory();

class IdleTrim {
 public:
  using Clock = std::chrono::steady_clock;
  explicit IdleTrim(Clock::duration stillness) : stillness_(stillness) {}

  // `changes`: the group's change count (StreamGroup::changes). Trims once per still spell.
  void Poll(std::uint64_t changes, Clock::time_point now = Clock::now());
  int trims() const { return trims_; }

 private:
  const Clock::duration stillness_;
  std::uint64_t changes_ = 0;
  Clock::time_point changed_at_{};
  bool trimmed_ = true;  // nothing to give back before the first change
  int trims_ = 0;
};

}  // namespace mssql_cdc
