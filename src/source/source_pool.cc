#include "source/source_pool.h"

#include <algorithm>

#include "core/errors.h"

namespace mssql_cdc {

SourcePool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), source_(std::move(other.source_)) {
  other.pool_ = nullptr;
}

SourcePool::Lease& SourcePool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Return();
    pool_ = other.pool_;
    source_ = std::move(other.source_);
    other.pool_ = nullptr;
  }
  return *this;
}

SourcePool::Lease::~Lease() { Return(); }

void SourcePool::Lease::Return() {
  if (pool_ && source_) pool_->Put(std::move(source_));
  pool_ = nullptr;
}

SourcePool::SourcePool(SourceFactory factory, int capacity)
    : factory_(std::move(factory)), capacity_(capacity) {
  if (capacity_ < 1) throw ConfigError("a source pool needs room for at least one source");
}

std::optional<SourcePool::Lease> SourcePool::TakeLocked(std::unique_lock<std::mutex>& lock) {
  if (!idle_.empty()) {
    Lease lease(this, std::move(idle_.back()));
    idle_.pop_back();
    return lease;
  }
  if (open_ < capacity_) return Open(lock);
  return std::nullopt;
}

SourcePool::Lease SourcePool::Open(std::unique_lock<std::mutex>& lock) {
  ++open_;
  most_open_ = std::max(most_open_, open_);
  lock.unlock();  // connecting takes time: others may borrow meanwhile
  std::unique_ptr<Source> source;
  try {
    source = factory_();
  } catch (...) {
    lock.lock();
    --open_;
    available_.notify_one();
    throw;
  }
  lock.lock();
  return Lease(this, std::move(source));
}

SourcePool::Lease SourcePool::Acquire() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (auto lease = TakeLocked(lock)) return std::move(*lease);
    available_.wait(lock);
  }
}

std::optional<SourcePool::Lease> SourcePool::TryAcquire() {
  std::unique_lock lock(mutex_);
  return TakeLocked(lock);
}

void SourcePool::Put(std::unique_ptr<Source> source) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(source));
  available_.notify_one();
}

int SourcePool::open() const {
  std::lock_guard lock(mutex_);
  return open_;
}

int SourcePool::most_open() const {
  std::lock_guard lock(mutex_);
  return most_open_;
}

}  // namespace mssql_cdc
