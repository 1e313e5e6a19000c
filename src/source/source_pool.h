// The Sources a process reads one database through: at most `capacity` of them open, each lent
// to one thread at a time and kept open between loans, so that a thousand streams of one
// pipeline hold `capacity` connections to SQL Server, not a thousand, and no loan logs in anew.
//
// Acquire waits while every Source is lent; TryAcquire does not, for work that can be done
// without another Source (a batch reads a range on the thread that has one). A lease returns
// its Source when destroyed. Sources are opened on first need, through the factory; a failure
// to open is the caller's error and leaves the pool as it was. Thread-safe.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "source/open_source.h"
#include "source/source.h"

namespace mssql_cdc {

class SourcePool {
 public:
  // Returns a lent Source to its pool.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    Source& operator*() const { return *source_; }
    Source* operator->() const { return source_.get(); }
    Source* get() const { return source_.get(); }
    explicit operator bool() const { return source_ != nullptr; }

   private:
    friend class SourcePool;
    Lease(SourcePool* pool, std::unique_ptr<Source> source) : pool_(pool), source_(std::move(source)) {}
    void Return();
    SourcePool* pool_ = nullptr;
    std::unique_ptr<Source> source_;
  };

  // `capacity` >= 1.
  SourcePool(SourceFactory factory, int capacity);
  SourcePool(const SourcePool&) = delete;
  SourcePool& operator=(const SourcePool&) = delete;

  Lease Acquire();
  std::optional<Lease> TryAcquire();

  int capacity() const { return capacity_; }
  // Sources open now (lent or idle), and the most that were ever open at once.
  int open() const;
  int most_open() const;

 private:
  // Under the lock: an idle Source, or room to open one (then `opening_` is counted).
  std::optional<Lease> TakeLocked(std::unique_lock<std::mutex>& lock);
  Lease Open(std::unique_lock<std::mutex>& lock);
  void Put(std::unique_ptr<Source> source);

  SourceFactory factory_;
  const int capacity_;
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<Source>> idle_;
  int open_ = 0;  // lent, idle, or being opened
  int most_open_ = 0;
};

}  // namespace mssql_cdc
