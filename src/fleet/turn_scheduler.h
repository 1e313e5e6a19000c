// The turns of many tasks run on a few threads: each task's next turn when it is due, the
// earliest due first (ties in the order they became due), never two turns of one task at once.
// A turn returns when its task's next turn is due, or nullopt when the task is done. A busy
// task asks for its next turn at once and so queues behind every task already due: a thousand
// quiet streams and one with a backlog share the threads by turns, and none starves.
//
// Thread-safe. Destroying the scheduler waits for the turns running then; tasks not done are
// dropped, so their owners must outlive it or be done first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <tuple>
#include <vector>

namespace mssql_cdc {

class TurnScheduler {
 public:
  using Clock = std::chrono::steady_clock;
  using Turn = std::function<std::optional<Clock::time_point>()>;

  explicit TurnScheduler(int threads);
  ~TurnScheduler();
  TurnScheduler(const TurnScheduler&) = delete;
  TurnScheduler& operator=(const TurnScheduler&) = delete;

  // Adds a task whose first turn is due now; returns its id.
  std::size_t Add(Turn turn);
  // Makes the task's next turn due now (its owner was asked to stop, say); a task in its turn
  // gets its next at once when this one returns.
  void Wake(std::size_t id);
  // Tasks not yet done.
  std::size_t active() const;
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  struct Task {
    Turn turn;
    std::uint64_t queued = 0;  // the sequence number of its entry in the queue; 0: none
    bool running = false;
    bool woken = false;
    bool done = false;
  };
  // (due, sequence, task): the earliest first, then the first queued.
  using Entry = std::tuple<Clock::time_point, std::uint64_t, std::size_t>;

  void Work();
  void QueueLocked(std::size_t id, Clock::time_point due);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> tasks_;  // grows while turns run: references stay valid
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  std::uint64_t next_sequence_ = 1;
  std::size_t active_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mssql_cdc
