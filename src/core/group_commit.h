// Many threads' writes made as one: each thread submits its item and waits; the first of them
// becomes the leader, takes every item queued by then and writes them together with one call
// of `write_all`, then wakes the others with their outcome. A thread alone writes at once,
// with no waiting for company; threads that arrive while a write runs form the next group.
// This is how LevelDB groups the writes of concurrent writers into one log record.
//
// `write_all` gets the items in arrival order. When it throws, every item of that group gets
// the exception. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace mssql_cdc {

template <typename Item>
class GroupCommit {
 public:
  using WriteAll = std::function<void(std::vector<Item>& items)>;

  explicit GroupCommit(WriteAll write_all, std::size_t max_group = 1024)
      : write_all_(std::move(write_all)), max_group_(max_group) {}

  // Returns once `item` was written (its group's write_all returned), or rethrows what that
  // write threw.
  void Submit(Item item) {
    Waiter waiter;
    waiter.item = std::move(item);
    std::unique_lock lock(mutex_);
    queue_.push_back(&waiter);
    cv_.wait(lock, [&] { return waiter.done || queue_.front() == &waiter; });
    if (waiter.done) {
      if (waiter.error) std::rethrow_exception(waiter.error);
      return;
    }
    // The leader: take a group, write it without the lock, hand out the outcome.
    std::vector<Waiter*> group;
    for (auto it = queue_.begin(); it != queue_.end() && group.size() < max_group_; ++it) {
      group.push_back(*it);
    }
    std::vector<Item> items;
    items.reserve(group.size());
    for (Waiter* w : group) items.push_back(std::move(w->item));
    lock.unlock();
    std::exception_ptr error;
    try {
      write_all_(items);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    for (Waiter* w : group) {
      queue_.pop_front();
      w->error = error;
      w->done = true;
    }
    cv_.notify_all();  // the group, and the next leader
    if (error) std::rethrow_exception(error);
  }

 private:
  struct Waiter {
    Item item;
    bool done = false;
    std::exception_ptr error;
  };

  WriteAll write_all_;
  std::size_t max_group_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Waiter*> queue_;
};

}  // namespace mssql_cdc
