// Stream::Impl, the stream behind Stream (stream.h), for the files that implement it by job:
// - stream_impl.cc: its life (started on a thread of its own or by a scheduler's turns,
//   stopped, ended with or without an error), and Stream's calls into it;
// - stream_setup.cc: the input checks before anything is written, and the writes before the
//   first batch (checkpoint, tables, bootstrap, recovery);
// - stream_turn.cc: one turn, which plans and runs at most one batch;
// - stream_snapshots.cc: the snapshots of the source table: the bootstrap's request,
//   re-snapshots after data loss, and the chunked snapshot's backfill beside the stream.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/backfill_runner.h"
#include "engine/bootstrap.h"
#include "engine/checkpoint_lock.h"
#include "engine/delta_backfill_tables.h"
#include "engine/generations.h"
#include "engine/stream.h"
#include "engine/stream_batch.h"

namespace mssql_cdc {

// A Source lent to the stream's context for as long as this object lives.
class LentSource {
 public:
  explicit LentSource(StreamContext& context)
      : context_(context), lease_(context.sources->Acquire()) {
    context_.source = lease_.get();
  }
  ~LentSource() { context_.source = nullptr; }
  LentSource(const LentSource&) = delete;
  LentSource& operator=(const LentSource&) = delete;

 private:
  StreamContext& context_;
  SourcePool::Lease lease_;
};

class Stream::Impl {
 public:
  Impl(const StreamConfig& config, SourceFactory factory);
  ~Impl();
  void Prepare();
  void Start();
  void StartTurns(std::function<void()> wake);
  void Stop();

  bool planned() const {
    std::lock_guard lock(mu_);
    return planned_ || ended_;
  }

  // One turn with a lent Source; see Stream::Turn.
  std::optional<std::chrono::steady_clock::time_point> Turn();
  bool Await(std::optional<std::chrono::milliseconds> timeout);

  bool active() const {
    std::lock_guard lock(mu_);
    return started_ && !ended_;
  }
  std::exception_ptr error() const {
    std::lock_guard lock(mu_);
    return error_;
  }
  StreamProgress progress() const {
    std::lock_guard lock(mu_);
    return progress_;
  }
  const std::vector<CapturedColumn>& columns() const { return columns_; }
  const std::vector<std::string>& index_columns() const { return context_.instance.index_columns; }
  const std::string& Name() const {
    return context_.instance.name.empty() ? context_.config.source.capture_instance
                                          : context_.instance.name;
  }

 private:
  StreamIdentity Identity() const {
    const StreamParams& params = context_.config.params;
    return {params.app_id, context_.instance.name, params.target};
  }

  // An error before the batch thread ran ends the stream with it, as Await and error() report,
  // and lets go of the checkpoint: a stream that never ran owns nothing.
  void Fail(std::exception_ptr error);

  // Everything the stream reads before it writes anything, on the caller's thread: the source,
  // the capture instance, the clock and the schemas; the checkpoint's lock and files when the
  // checkpoint exists; startingLsn for a new checkpoint; the tables that exist already.
  void CheckInput();

  // The writes before the first batch: the lock (when the checkpoint is new) and its owner,
  // the checkpoint's identity, the tables, the bootstrap, recovery.
  void Setup();
  void MarkPlanned();
  bool StopRequested();

  // Sleeps until `until` or Stop, whichever comes first.
  void WaitUntil(std::chrono::steady_clock::time_point until);

  // Ends the stream with `error` (null: ended well) and wakes Await.
  void End(std::exception_ptr error);
  void Changed();

  // The source's max LSN: through the group's cache when the stream has one.
  std::optional<Lsn> MaxLsn();

  // The next turn's time when this turn has nothing to do without asking the source: a
  // processing-time or default trigger, no batch to replay, and no commits of the instance up
  // to the group's max LSN of the last 100 ms. nullopt: the turn needs the source.
  std::optional<std::chrono::steady_clock::time_point> QuietTurn();

  // When a turn that found nothing looks again: after the idle poll at the earliest, also for
  // a processing-time interval shorter than it (processingTime=0 would otherwise spin a core).
  std::chrono::steady_clock::time_point IdleUntil(std::chrono::steady_clock::time_point now) const;

  // One turn's work, with context_.source lent: at most one batch. Returns when the next turn
  // is due; nullopt when the stream is done (availableNow caught up).
  std::optional<std::chrono::steady_clock::time_point> RunTurn();
  BootstrapRequest BootstrapRequestFor();

  // The pre-flight of on_data_loss="resnapshot" (generations.h): when cleanup purged the
  // changes after where this generation stands, the table is snapshotted again (full or
  // chunked, as the stream's snapshot mode) and generation n+1 goes on from it, with its own
  // checkpoint and sink id. At most once per resnapshot_interval_days.
  void ResnapshotIfLost();

  // The Delta tables a chunked snapshot's open and backfill read and write.
  DeltaBackfillConfig BackfillConfig() const;

  DeltaBackfillTables BackfillTablesFor();

  // Opens the chunked snapshot of `bootstrap` (or finds it open); `found` when bronze holds a
  // snapshot of the table already, which the full bootstrap's path starts from.
  ChunkedOpenResult OpenChunked(const BootstrapRequest& bootstrap);
  void StartBackfill();

  // The backfill's status into the progress; its failure is the stream's. Waves written since
  // the last look are applied to silver here, on the stream's thread (so never beside a
  // batch's apply), rather than waiting for the next batch: a quiet table, or an availableNow
  // run whose changes ended before its snapshot did, still gets them.
  void ObserveBackfill();

  StreamContext context_;
  // on_data_loss="resnapshot": the checkpoint and app_id as configured, and the generation.
  std::string base_checkpoint_, base_app_id_;
  GenerationState generation_;
  SourceFactory factory_;
  std::unique_ptr<BackfillRunner> backfill_;
  std::int64_t silver_saw_chunks_ = 0;  // the backfill's chunks silver was last given
  bool silver_saw_done_ = false;
  std::shared_ptr<arrow::Schema> output_schema_;
  std::vector<CapturedColumn> columns_;  // as CheckInput read them
  std::optional<Offset> initial_;  // where a new checkpoint starts, found by CheckInput
  bool prepared_ = false;
  std::optional<BatchOffsets> replay_;
  std::int64_t next_batch_id_ = 0;
  Offset next_start_;
  std::optional<Lsn> target_;  // availableNow: the max LSN seen at start
  std::optional<Lsn> empty_up_to_;  // no commits of the instance from next_start_ to it
  std::chrono::steady_clock::time_point next_trigger_{};  // processingTime: the next batch

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool planned_ = false;
  bool ended_ = false;
  bool stop_requested_ = false;
  std::exception_ptr error_;
  StreamProgress progress_;
  std::function<void()> wake_;  // the scheduler's, for StartTurns
  // Declared before thread_ so that it is released after the thread is joined: the lock is
  // held to after the last write.
  std::unique_ptr<CheckpointLock> lock_;
  std::thread thread_;
};


}  // namespace mssql_cdc
