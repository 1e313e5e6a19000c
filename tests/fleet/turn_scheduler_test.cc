// TurnScheduler: turns when due, the earliest first, never two of one task at once, busy tasks
// queued behind due ones, Wake, and destruction with tasks left.
#include "fleet/turn_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace mssql_cdc {
namespace {

using Clock = TurnScheduler::Clock;
using namespace std::chrono_literals;

TEST(TurnScheduler, RunsEachTaskUntilItIsDoneAndNeverTwoTurnsOfOneTaskAtOnce) {
  TurnScheduler scheduler(4);
  std::atomic<int> turns{0};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  scheduler.Add([&]() -> std::optional<Clock::time_point> {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(1ms);
    inside.fetch_sub(1);
    if (++turns == 20) return std::nullopt;
    return Clock::now();
  });
  for (int i = 0; i < 200 && scheduler.active() > 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(scheduler.active(), 0u);
  EXPECT_EQ(turns.load(), 20);
  EXPECT_FALSE(overlapped.load());
}

TEST(TurnScheduler, ABusyTaskTakesTurnsWithTheTasksThatAreDue) {
  // One thread, one task that always has more to do, and 50 that each want two turns: the
  // busy one must not run again before every due task had its turn.
  TurnScheduler scheduler(1);
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<int> quiet_done{0};
  scheduler.Add([&]() -> std::optional<Clock::time_point> {
    std::lock_guard lock(mutex);
    order.push_back(-1);
    if (quiet_done.load() == 50) return std::nullopt;
    return Clock::now();
  });
  for (int t = 0; t < 50; ++t) {
    auto left = std::make_shared<int>(2);
    scheduler.Add([&, t, left]() -> std::optional<Clock::time_point> {
      std::lock_guard lock(mutex);
      order.push_back(t);
      if (--*left == 0) {
        ++quiet_done;
        return std::nullopt;
      }
      return Clock::now();
    });
  }
  for (int i = 0; i < 400 && scheduler.active() > 0; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(scheduler.active(), 0u);
  // Between two turns of the busy task, at most every other task ran once.
  int since_busy = 0, most = 0;
  for (int who : order) {
    if (who == -1) {
      most = std::max(most, since_busy);
      since_busy = 0;
    } else {
      ++since_busy;
    }
  }
  EXPECT_LE(most, 50);
  EXPECT_GE(std::count(order.begin(), order.end(), -1), 2);
}

TEST(TurnScheduler, ATaskWaitsForItsDueTimeAndWakeBringsItForward) {
  TurnScheduler scheduler(2);
  std::atomic<int> turns{0};
  std::atomic<bool> stop{false};
  const std::size_t id = scheduler.Add([&]() -> std::optional<Clock::time_point> {
    ++turns;
    if (stop) return std::nullopt;
    return Clock::now() + 1h;
  });
  for (int i = 0; i < 100 && turns.load() == 0; ++i) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(turns.load(), 1);  // the next is an hour away
  stop = true;
  scheduler.Wake(id);
  for (int i = 0; i < 100 && scheduler.active() > 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(turns.load(), 2);
  EXPECT_EQ(scheduler.active(), 0u);
}

TEST(TurnScheduler, DestroyingWithTasksLeftWaitsForRunningTurnsOnly) {
  std::atomic<int> turns{0};
  {
    TurnScheduler scheduler(2);
    for (int t = 0; t < 10; ++t) {
      scheduler.Add([&]() -> std::optional<Clock::time_point> {
        ++turns;
        return Clock::now() + 1h;
      });
    }
    for (int i = 0; i < 100 && turns.load() < 10; ++i) std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(turns.load(), 10);
}

}  // namespace
}  // namespace mssql_cdc
