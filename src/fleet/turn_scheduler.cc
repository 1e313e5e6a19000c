#include "fleet/turn_scheduler.h"

#include <spdlog/spdlog.h>

#include "core/errors.h"

namespace mssql_cdc {

TurnScheduler::TurnScheduler(int threads) {
  if (threads < 1) throw ConfigError("a turn scheduler needs at least one thread");
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

TurnScheduler::~TurnScheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& thread : threads_) thread.join();
}

std::size_t TurnScheduler::Add(Turn turn) {
  std::lock_guard lock(mutex_);
  const std::size_t id = tasks_.size();
  tasks_.push_back(Task{std::move(turn)});
  ++active_;
  QueueLocked(id, Clock::now());
  return id;
}

void TurnScheduler::Wake(std::size_t id) {
  std::lock_guard lock(mutex_);
  if (id >= tasks_.size()) return;
  Task& task = tasks_[id];
  if (task.done) return;
  if (task.running) {
    task.woken = true;
  } else {
    QueueLocked(id, Clock::now());
  }
}

std::size_t TurnScheduler::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

void TurnScheduler::QueueLocked(std::size_t id, Clock::time_point due) {
  // A task has one live entry: a newer one makes the older stale (skipped when popped).
  const std::uint64_t sequence = next_sequence_++;
  tasks_[id].queued = sequence;
  queue_.emplace(due, sequence, id);
  changed_.notify_one();
}

void TurnScheduler::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) return;
    if (queue_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const auto [due, sequence, id] = queue_.top();
    if (tasks_[id].queued != sequence) {  // stale
      queue_.pop();
      continue;
    }
    if (due > Clock::now()) {
      changed_.wait_until(lock, due);
      continue;
    }
    queue_.pop();
    Task& task = tasks_[id];
    task.queued = 0;
    task.running = true;
    Turn& turn = task.turn;
    lock.unlock();
    std::optional<Clock::time_point> next;
    try {
      next = turn();
    } catch (const std::exception& e) {
      spdlog::error("a scheduled turn failed: {}", e.what());  // turns report their own errors
    }
    lock.lock();
    Task& after = tasks_[id];
    after.running = false;
    if (!next) {
      after.done = true;
      --active_;
      changed_.notify_all();
      continue;
    }
    QueueLocked(id, after.woken ? Clock::now() : *next);
    after.woken = false;
  }
}

}  // namespace mssql_cdc
