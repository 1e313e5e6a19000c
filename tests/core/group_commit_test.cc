// GroupCommit: every item written once, in groups, errors reaching every item of their group.
#include "core/group_commit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

namespace mssql_cdc {
namespace {

TEST(GroupCommit, ConcurrentItemsAreWrittenOnceInFewerGroups) {
  std::mutex mutex;
  std::multiset<int> written;
  std::atomic<int> groups{0};
  GroupCommit<int> commit([&](std::vector<int>& items) {
    ++groups;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a write takes a while
    std::lock_guard lock(mutex);
    written.insert(items.begin(), items.end());
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) commit.Submit(t * 100 + i);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(written.size(), 400u);
  for (int t = 0; t < 16; ++t) {
    for (int i = 0; i < 25; ++i) EXPECT_EQ(written.count(t * 100 + i), 1u);
  }
  EXPECT_LT(groups.load(), 400);  // writers that came while one wrote went together
}

TEST(GroupCommit, AFailedWriteFailsEveryItemOfItsGroupAndNotTheNext) {
  std::atomic<bool> fail{true};
  GroupCommit<int> commit([&](std::vector<int>&) {
    if (fail.exchange(false)) throw std::runtime_error("disk full");
  });
  EXPECT_THROW(commit.Submit(1), std::runtime_error);
  EXPECT_NO_THROW(commit.Submit(2));
}

}  // namespace
}  // namespace mssql_cdc
