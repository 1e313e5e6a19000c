#include "snapshot/parallel_snapshot.h"

#include <arrow/api.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "core/errors.h"
#include "core/arrow_status.h"
#include "source/parallel_reads.h"

namespace mssql_cdc {

// The reader behind Merged: a thread runs every range (RunOnSources) and puts the batches in
// a bounded queue this reader takes them from.
class MergedSnapshotReader final : public arrow::RecordBatchReader {
 public:
  explicit MergedSnapshotReader(ParallelSnapshot& snapshot)
      : snapshot_(snapshot), capacity_(2 * snapshot.request_.plan.ranges.size()) {}

  ~MergedSnapshotReader() override {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    changed_.notify_all();
    if (reads_.joinable()) reads_.join();
  }

  std::shared_ptr<arrow::Schema> schema() const override { return snapshot_.transform_.schema; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (!reads_.joinable()) reads_ = std::thread([this] { ReadAll(); });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      *batch = std::move(queue_.front());
      queue_.pop_front();
      changed_.notify_all();
      return arrow::Status::OK();
    }
    batch->reset();
    if (error_) return StatusOf(error_);
    return arrow::Status::OK();
  }

 private:
  struct Stopped {};

  void ReadAll() {
    std::exception_ptr error;
    try {
      RunOnSources(snapshot_.request_.plan.ranges.size(), snapshot_.first_source_,
                   snapshot_.sources_, [this](std::size_t i, Source& source) {
                     snapshot_.ReadRange(i, source, [this](const auto& batch) { Put(batch); });
                   });
    } catch (const Stopped&) {
      // The reader went away: nobody waits for the rest.
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    error_ = error;
    done_ = true;
    changed_.notify_all();
  }

  void Put(const std::shared_ptr<arrow::RecordBatch>& batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < capacity_ || stopped_; });
    if (stopped_) throw Stopped{};
    queue_.push_back(batch);
    changed_.notify_all();
  }

  // The engine's error as a Status ThrowIfError gives back (core/arrow_status.h).
  static arrow::Status StatusOf(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (...) {
      return CurrentExceptionToStatus();
    }
  }

  ParallelSnapshot& snapshot_;
  const std::size_t capacity_;
  std::thread reads_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<arrow::RecordBatch>> queue_;
  bool stopped_ = false;
  bool done_ = false;
  std::exception_ptr error_;
};

ParallelSnapshot::ParallelSnapshot(ParallelSnapshotRequest request, Source& first_source,
                                   SourcePool& sources, SnapshotBatchTransform transform)
    : request_(std::move(request)), first_source_(first_source), sources_(sources),
      transform_(std::move(transform)) {
  if (request_.plan.ranges.empty()) throw InternalError("a snapshot plan without ranges");
  ranges_.resize(request_.plan.ranges.size());
}

void ParallelSnapshot::ReadRange(
    std::size_t i, Source& source,
    const std::function<void(const std::shared_ptr<arrow::RecordBatch>&)>& sink) {
  const KeyRange& range = request_.plan.ranges[i];
  SnapshotReadRequest read;
  read.capture_instance = request_.capture_instance;
  read.columns = request_.columns;
  read.key_columns = request_.plan.key_columns;
  read.lo = range.lo;
  read.hi = range.hi;
  read.snapshot_lsn = request_.snapshot_lsn;
  read.snapshot_commit_ts = request_.snapshot_commit_ts;
  read.batch_rows = request_.batch_rows;
  read.batch_bytes = request_.batch_bytes;
  const auto started = std::chrono::steady_clock::now();
  auto reader = source.ReadSnapshot(read);
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader->ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    batch = transform_.apply(batch, i);
    rows_ += batch->num_rows();
    ranges_[i].rows += batch->num_rows();
    sink(batch);
  }
  ranges_[i].seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::vector<delta::AddFile> ParallelSnapshot::WriteInto(
    const std::function<std::unique_ptr<delta::DataFileStream>(std::size_t)>& streams) {
  const std::size_t n = request_.plan.ranges.size();
  // Every stream lives until all threads ended: a failure anywhere deletes every range's files.
  std::vector<std::unique_ptr<delta::DataFileStream>> open(n);
  for (std::size_t i = 0; i < n; ++i) open[i] = streams(i);
  std::vector<std::vector<delta::AddFile>> files(n);
  try {
    RunOnSources(n, first_source_, sources_, [&](std::size_t i, Source& source) {
      ReadRange(i, source, [&](const auto& batch) { open[i]->Write(batch); });
      files[i] = open[i]->Finish();
    });
  } catch (...) {
    for (auto& stream : open) stream->Discard();
    throw;
  }
  std::vector<delta::AddFile> all;
  for (auto& range : files) all.insert(all.end(), range.begin(), range.end());
  return all;
}

std::unique_ptr<arrow::RecordBatchReader> ParallelSnapshot::Merged() {
  return std::make_unique<MergedSnapshotReader>(*this);
}

}  // namespace mssql_cdc
