#include "engine/stream.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "core/errors.h"
#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/backfill_runner.h"
#include "engine/bootstrap.h"
#include "engine/delta_backfill_tables.h"
#include "engine/generations.h"
#include "engine/checkpoint_lock.h"
#include "engine/staged_files.h"
#include "engine/stream_batch.h"
#include "engine/stream_start.h"
#include "engine/table_schemas.h"
#include "schema_change/batch_schema.h"
#include "snapshot/chunk_plan.h"
#include "snapshot/plans_table.h"
#include "snapshot/snapshot_finder.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

// How long an idle stream waits before asking for the max LSN again (default trigger, and a
// processing-time trigger of a shorter interval): short enough for low latency, long enough to
// keep an idle stream's CPU near zero.
constexpr std::chrono::milliseconds kIdlePoll{100};
// How often a caught-up availableNow stream looks whether its backfill is done.
constexpr std::chrono::milliseconds kBackfillPoll{200};

void CheckSupported(const StreamConfig& config) {
  ValidateStreamConfig(config.source, config.params);
  if (config.source.capture_instance.empty()) {
    throw ConfigError("option 'captureInstance' is required: name the capture instance to read");
  }
  config.limits.Validate();
  if (config.source.num_partitions && *config.source.num_partitions > config.limits.connections) {
    throw ConfigError(fmt::format(
        "numPartitions = {} is more than [engine] connections = {}: a batch reads its ranges at "
        "once, each on a connection of its own; lower numPartitions or raise connections",
        *config.source.num_partitions, config.limits.connections));
  }
}

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

}  // namespace

class Stream::Impl {
 public:
  Impl(const StreamConfig& config, SourceFactory factory) {
    context_.config = config;
    factory_ = factory ? factory : MakeSourceFactory(config.source);
    if (config.services) context_.sources = config.services->sources;
    if (!context_.sources) {
      // A stream alone lends its ranges no more Sources than it reads ranges at once.
      const int partitions = std::min(ReadPartitions(config.source), config.limits.connections);
      context_.sources = std::make_shared<SourcePool>(
          factory ? std::move(factory) : MakeSourceFactory(config.source), partitions);
    }
  }

  ~Impl() {
    Stop();
    if (thread_.joinable()) thread_.join();
    backfill_.reset();
  }

  void Prepare() {
    if (prepared_) return;
    try {
      CheckInput();
    } catch (...) {
      Fail(std::current_exception());
      throw;
    }
    prepared_ = true;
  }

  void Start() {
    StartTurns(nullptr);
    thread_ = std::thread([this] {
      while (auto due = Turn()) WaitUntil(*due);
    });
    // Started once the batch thread has planned (or failed to plan) its first batch. A
    // failure there (data loss at the first batch, say) is this stream's runtime failure, as
    // a query's first batch is in Spark: it ends this stream alone and is reported by Await
    // and error(), not thrown here, so the streams started after it still start.
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return planned_ || ended_; });
  }

  void StartTurns(std::function<void()> wake) {
    {
      std::lock_guard lock(mu_);
      if (started_) throw ConfigError("stream of '" + Name() + "' was started already");
      started_ = true;
      wake_ = std::move(wake);
    }
    Changed();
    try {
      if (!prepared_) CheckInput();
      prepared_ = true;
      Setup();
    } catch (...) {
      Fail(std::current_exception());
      throw;
    }
  }

  void Stop() {
    std::function<void()> wake;
    {
      std::lock_guard lock(mu_);
      stop_requested_ = true;
      cv_.notify_all();
      if (started_ && !ended_) wake = wake_;
    }
    if (backfill_) backfill_->Stop();
    if (wake) wake();  // a turn far ahead comes now, and ends the stream
  }

  bool planned() const {
    std::lock_guard lock(mu_);
    return planned_ || ended_;
  }

  // One turn with a lent Source; see Stream::Turn.
  std::optional<std::chrono::steady_clock::time_point> Turn() {
    if (StopRequested()) {
      End(nullptr);
      return std::nullopt;
    }
    try {
      // A quiet stream whose range is known empty up to the group's fresh max LSN has nothing
      // to do: it does not take a Source, which a busy stream's batch may be waiting for.
      ObserveBackfill();
      if (auto due = QuietTurn()) return due;
      const LentSource lent(context_);
      auto due = RunTurn();
      if (!due) End(nullptr);
      return due;
    } catch (const std::exception& e) {
      spdlog::error("stream of capture instance '{}' into {} failed: {}", Name(),
                    context_.config.params.target, e.what());
      End(std::current_exception());
    } catch (...) {
      End(std::current_exception());
    }
    return std::nullopt;
  }

  bool Await(std::optional<std::chrono::milliseconds> timeout) {
    std::unique_lock lock(mu_);
    auto done = [this] { return !started_ || ended_; };
    if (!timeout) {
      cv_.wait(lock, done);
      return true;
    }
    return cv_.wait_for(lock, *timeout, done);
  }

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
  void Fail(std::exception_ptr error) {
    lock_.reset();
    std::lock_guard lock(mu_);
    started_ = true;
    error_ = std::move(error);
    ended_ = true;
    cv_.notify_all();
    Changed();
  }

  // Everything the stream reads before it writes anything, on the caller's thread: the source,
  // the capture instance, the clock and the schemas; the checkpoint's lock and files when the
  // checkpoint exists; startingLsn for a new checkpoint; the tables that exist already.
  void CheckInput() {
    StreamContext& c = context_;
    const StreamParams& params = c.config.params;
    const LentSource lent(c);
    if (params.on_data_loss == OnDataLoss::kResnapshot) {
      // Generation n's checkpoint and sink id stand for the stream's (generations.h).
      base_checkpoint_ = params.checkpoint;
      base_app_id_ = params.app_id;
      generation_ = GenerationState::Read(base_checkpoint_).value_or(GenerationState{});
      c.config.params.checkpoint = GenerationCheckpoint(base_checkpoint_, generation_.generation);
      c.config.params.app_id = GenerationAppId(base_app_id_, generation_.generation);
    }
    c.instance = c.source->ResolveCaptureInstance(c.config.source.capture_instance);
    c.clock = ResolveSourceClock(*c.source, c.config.source.source_time_zone);
    // Every instance of the table, a newer one's columns too (or the `columns` option's):
    // two instances that type a column incompatibly, or a listed column no instance captures,
    // are refused here, before anything is written.
    const TableInstances table_instances = TableInstances::Of(*c.source, c.instance);
    NoteInstances(c, table_instances.all());
    const StreamColumns resolved = ResolveStreamColumns(*c.source, table_instances, c.config.source.columns);
    const auto& columns = resolved.captured;
    c.columns = columns;
    c.read_fields = resolved.fields;
    c.columns_listed = resolved.listed;
    output_schema_ = OutputSchema(resolved.fields, c.config.source.include_command_id);
    c.bronze_schema = BronzeSchema(output_schema_);
    // numPartitions left to its default never asks for more connections than there are.
    c.partitions = std::min(ReadPartitions(c.config.source), c.config.limits.connections);
    const int ranges = c.config.concurrent_ranges > 0 ? c.config.concurrent_ranges : c.partitions;
    columns_ = columns;
    if (params.bootstrap && params.snapshot == SnapshotMode::kChunked) {
      // A table that cannot be read in chunks is refused before anything is written.
      ChunkPlanKind(c.instance, columns, c.config.source.snapshot_keys.value_or(std::vector<std::string>{}));
    }
    // A group checks its widest table once every table is known (StreamGroup::Prepare).
    if (c.config.concurrent_ranges == 0) {
      CheckRowFitsBudget(columns, c.instance.name, c.config.limits, ranges);
    }
    const RangeMemory memory = RangeMemoryFor(c.config.limits, ranges);
    c.arrow_batch_bytes = memory.arrow_batch_bytes;
    c.write_options.row_group_bytes = memory.row_group_bytes;

    c.checkpoint.emplace(params.checkpoint);
    bool started_before = false;
    if (c.checkpoint->Exists()) {
      lock_ = CheckpointLock::Acquire(params.checkpoint);
      c.checkpoint->Check(Identity());
      started_before = c.checkpoint->ReadStart() || c.checkpoint->ReadSnapshot();
    }
    if (!started_before && !params.bootstrap) {
      initial_ = InitialOffset(*c.source, *c.clock, c.instance,
                               c.config.source.starting_position());
    }
    CheckExistingBronze(params.target, c.bronze_schema);
    const auto& services = c.config.services;
    auto check_shared = [&](const std::string& uri, TableKind kind) {
      if (services && services->table_checks) {
        services->table_checks->Check(uri, kind);
      } else {
        CheckExistingTable(uri, kind);
      }
    };
    if (params.facts_table) check_shared(*params.facts_table, TableKind::kFacts);
    if (c.config.control_table) check_shared(*c.config.control_table, TableKind::kControl);
  }

  // The writes before the first batch: the lock (when the checkpoint is new) and its owner,
  // the checkpoint's identity, the tables, the bootstrap, recovery.
  void Setup() {
    StreamContext& c = context_;
    const StreamParams& params = c.config.params;
    const LentSource lent(c);
    if (!lock_) {
      c.checkpoint->Create();
      // Another run may have created it meanwhile: the lock decides, and the files are read
      // again below, under it.
      lock_ = CheckpointLock::Acquire(params.checkpoint);
      c.checkpoint->Check(Identity());
    }
    lock_->RecordOwner();
    c.checkpoint->ClaimFor(Identity());
    c.bronze.emplace(
        OpenOrCreateTable(params.target, BronzeTableOptions(output_schema_, c.instance.name)));
    if (params.facts_table) {
      if (c.config.services) c.facts = c.config.services->facts;
      if (!c.facts) {
        c.facts = std::make_shared<delta::GroupedAppender>(
            OpenOrCreateTable(*params.facts_table, FactsTableOptions()));
      }
    }
    if (c.config.control_table) {
      EnsureControlTable(*c.config.control_table);
      if (c.config.services) c.verdicts = c.config.services->verdicts;
      if (!c.verdicts) {
        c.verdicts = std::make_shared<VerdictWriter>(*c.config.control_table, c.config.granularity);
      }
    }
    // Files of a batch that a crash stopped before its commit: nobody will name them.
    DeleteAbandonedStagedFiles(c);

    if (params.on_data_loss == OnDataLoss::kResnapshot) ResnapshotIfLost();
    std::optional<Offset> start = c.checkpoint->ReadStart();
    auto snapshot = c.checkpoint->ReadSnapshot();
    if (!start && (params.bootstrap || snapshot)) {
      // A new checkpoint, or one whose bootstrap was interrupted: finish the snapshot first.
      const BootstrapRequest request = BootstrapRequestFor();
      std::optional<Offset> chunked;
      if (params.snapshot == SnapshotMode::kChunked && !snapshot) {
        const ChunkedOpenResult opened = OpenChunked(request);
        if (!opened.found) chunked = opened.snapshot;
      }
      if (chunked) {
        c.checkpoint->WriteSnapshot(SnapshotState{true, *chunked, 0, -1});
        start = chunked;
      } else {
        if (!snapshot && c.facts) {
          CheckModeLock(BackfillTablesFor().SnapshotEvents(), params.app_id, SnapshotMode::kFull,
                        "bootstrap (snapshot=\"full\")", c.source->MinLsn(c.instance.name));
        }
        DeltaBootstrapTables tables(*c.bronze, c.facts.get(), c.write_options);
        start = RunBootstrap(request, *c.source, *c.sources, *c.clock, *c.checkpoint, tables).offset;
      }
      c.checkpoint->WriteStart(*start);
      // A whole snapshot in bronze proves the table complete up to its LSN's commit: that is
      // the verdict until a batch moves it (data first, verdict after). A chunked one proves
      // nothing until its last wave.
      if (!chunked && c.verdicts) c.verdicts->Advance(c.config.tracked_table.value_or(params.target), *start);
      AfterBronze(c);
    } else if (!start) {
      start = initial_ ? *initial_
                       : InitialOffset(*c.source, *c.clock, c.instance,
                                       c.config.source.starting_position());
      c.checkpoint->WriteStart(*start);
    } else if (params.bootstrap && !snapshot) {
      spdlog::warn("capture instance '{}': bootstrap asked for, but checkpoint {} already "
                   "streams from LSN {}; no snapshot is taken",
                   c.instance.name, params.checkpoint, start->lsn.ToString());
    }

    // A chunked snapshot of the bootstrap or of a re-snapshot is read next to the stream.
    if (params.snapshot == SnapshotMode::kChunked && c.facts &&
        (params.bootstrap || generation_.generation > 0)) {
      StartBackfill();
    }

    const RecoveryPoint recovery = c.checkpoint->Recover();
    replay_ = recovery.replay;
    next_batch_id_ = recovery.next_batch_id;
    next_start_ = recovery.next_start.value_or(*start);
    c.bronze_txn = recovery.bronze_txn;
    {
      std::lock_guard lock(mu_);
      progress_.last_batch_id = next_batch_id_ - 1;
      if (recovery.next_start) {
        progress_.end = recovery.next_start;
      } else if (c.checkpoint->ReadSnapshot()) {
        // Bronze holds the table as of the snapshot: that is the position a verdict may use.
        progress_.end = *start;
      }
    }
    Changed();
    if (params.trigger.kind() == Trigger::Kind::kAvailableNow) {
      // Fixed now: changes committed later wait for the next run.
      target_ = c.source->MaxLsn();
    }
  }

  void MarkPlanned() {
    std::lock_guard lock(mu_);
    if (!planned_) {
      planned_ = true;
      cv_.notify_all();
    }
  }

  bool StopRequested() {
    std::lock_guard lock(mu_);
    return stop_requested_;
  }

  // Sleeps until `until` or Stop, whichever comes first.
  void WaitUntil(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, until, [this] { return stop_requested_; });
  }

  // Ends the stream with `error` (null: ended well) and wakes Await.
  void End(std::exception_ptr error) {
    std::lock_guard lock(mu_);
    if (error && !error_) error_ = std::move(error);
    ended_ = true;
    cv_.notify_all();
    Changed();
  }

  void Changed() {
    const auto& services = context_.config.services;
    if (services && services->changes) services->changes->fetch_add(1, std::memory_order_relaxed);
  }

  // The source's max LSN: through the group's cache when the stream has one.
  std::optional<Lsn> MaxLsn() {
    const auto& services = context_.config.services;
    if (services && services->max_lsn) return services->max_lsn->Get(*context_.source);
    return context_.source->MaxLsn();
  }

  // The next turn's time when this turn has nothing to do without asking the source: a
  // processing-time or default trigger, no batch to replay, and no commits of the instance up
  // to the group's max LSN of the last 100 ms. nullopt: the turn needs the source.
  std::optional<std::chrono::steady_clock::time_point> QuietTurn() {
    const Trigger& trigger = context_.config.params.trigger;
    const auto& services = context_.config.services;
    if (replay_ || !empty_up_to_ || trigger.kind() == Trigger::Kind::kAvailableNow ||
        !services || !services->max_lsn) {
      return std::nullopt;
    }
    const std::optional<Lsn> max_lsn = services->max_lsn->Fresh();
    if (!max_lsn || *max_lsn != *empty_up_to_) return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    if (trigger.kind() == Trigger::Kind::kProcessingTime) next_trigger_ = now + trigger.interval();
    return IdleUntil(now);
  }

  // When a turn that found nothing looks again: after the idle poll at the earliest, also for
  // a processing-time interval shorter than it (processingTime=0 would otherwise spin a core).
  std::chrono::steady_clock::time_point IdleUntil(std::chrono::steady_clock::time_point now) const {
    const auto idle_until = now + kIdlePoll;
    if (context_.config.params.trigger.kind() == Trigger::Kind::kDefault) return idle_until;
    return std::max(next_trigger_, idle_until);
  }

  // One turn's work, with context_.source lent: at most one batch. Returns when the next turn
  // is due; nullopt when the stream is done (availableNow caught up).
  std::optional<std::chrono::steady_clock::time_point> RunTurn() {
    StreamContext& c = context_;
    BatchRunner runner(c);
    const Trigger& trigger = c.config.params.trigger;
    const auto now = std::chrono::steady_clock::now();
    // A processing-time trigger runs a batch per interval, counted from each batch's start.
    if (trigger.kind() == Trigger::Kind::kProcessingTime) next_trigger_ = now + trigger.interval();
    std::optional<BatchOffsets> offsets;
    if (replay_) {
      // The batch that was running when the last run stopped, with its range unchanged.
      offsets = std::move(replay_);
      replay_.reset();
    } else {
      const bool available_now = trigger.kind() == Trigger::Kind::kAvailableNow;
      std::optional<Lsn> target = available_now ? target_ : MaxLsn();
      // A range found without commits of the instance stays so (a max LSN is final), so a
      // quiet stream asks again only once the max LSN has moved.
      if (target && target != empty_up_to_) {
        offsets = runner.Plan(next_batch_id_, next_start_, *target);
        if (!offsets) empty_up_to_ = target;
      }
    }
    MarkPlanned();
    ObserveBackfill();
    if (!offsets) {
      if (trigger.kind() == Trigger::Kind::kAvailableNow) {
        // availableNow reads everything there is, the open chunked snapshot included; a
        // backfill waiting for headroom (or metrics) is left to the next run.
        if (backfill_ && !backfill_->ended()) {
          const auto status = backfill_->status();
          if (!status || !status->paused) return now + kBackfillPoll;
          backfill_->Stop();
        }
        std::lock_guard lock(mu_);
        progress_.caught_up = true;
        Changed();
        return std::nullopt;
      }
      return IdleUntil(now);
    }
    const BatchOutcome outcome = runner.Execute(*offsets);
    next_batch_id_ = outcome.commit.batch_id + 1;
    next_start_ = outcome.end;
    empty_up_to_.reset();
    {
      std::lock_guard lock(mu_);
      ++progress_.batches;
      progress_.last_batch_id = outcome.commit.batch_id;
      progress_.last_rows = outcome.commit.rows;
      progress_.total_rows += outcome.commit.rows;
      progress_.end = outcome.end;
      progress_.capture_lag_seconds = outcome.facts.capture_lag_seconds;
      progress_.ingestion_lag_seconds = outcome.facts.ingestion_lag_seconds;
      progress_.retention_headroom_hours = outcome.facts.retention_headroom_hours;
      if (outcome.facts.retention_watermark_ts) {
        progress_.cleanup_purged_yet =
            CleanupHasPurged(context_.clock->ToUtc(context_.instance.create_date), outcome.facts.retention_watermark_ts);
      }
      if (outcome.facts.duration_ms) progress_.last_batch_seconds = *outcome.facts.duration_ms / 1000.0;
    }
    Changed();
    if (trigger.kind() == Trigger::Kind::kProcessingTime) return next_trigger_;
    return std::chrono::steady_clock::now();
  }

  BootstrapRequest BootstrapRequestFor() {
    StreamContext& c = context_;
    BootstrapRequest request;
    request.instance = SnapshotInstance(TableInstances::Of(*c.source, c.instance), c.instance);
    request.instances = InstancesOfTable(c.source->ListCaptureInstances(), c.instance);
    request.columns = c.source->CapturedColumns(request.instance.name);
    request.bronze_schema = c.bronze_schema;
    request.app_id = c.config.params.app_id;
    request.target = c.config.params.target;
    request.arrow_batch_size = c.config.source.arrow_batch_size;
    request.arrow_batch_bytes = c.arrow_batch_bytes;
    request.partitions = c.partitions;
    request.key_columns = c.config.source.snapshot_keys.value_or(std::vector<std::string>{});
    return request;
  }

  // The pre-flight of on_data_loss="resnapshot" (generations.h): when cleanup purged the
  // changes after where this generation stands, the table is snapshotted again (full or
  // chunked, as the stream's snapshot mode) and generation n+1 goes on from it, with its own
  // checkpoint and sink id. At most once per resnapshot_interval_days.
  void ResnapshotIfLost() {
    StreamContext& c = context_;
    const std::optional<Offset> start = c.checkpoint->ReadStart();
    if (!start) return;  // a new checkpoint has read nothing it could have lost
    const RecoveryPoint point = c.checkpoint->Recover();
    const Offset last = point.replay ? point.replay->start : point.next_start.value_or(*start);
    const auto loss = FindLoss(*c.source, *c.clock, c.instance.name, last);
    if (!loss) return;
    const UtcMicros now = NowUtc();
    CheckResnapshotInterval(generation_, now, c.config.params.resnapshot_interval_days,
                            c.instance.name, *loss);
    const int next = generation_.generation + 1;
    spdlog::warn("capture instance '{}': CDC cleanup purged the changes after LSN {} (they resume "
                 "at {}); on_data_loss=\"resnapshot\": snapshotting the table again as generation {}",
                 c.instance.name, last.lsn.ToString(), loss->retention.min_lsn.ToString(), next);
    GenerationState recovering = generation_;
    recovering.recovering = last.lsn;
    recovering.Write(base_checkpoint_);

    // Generation n+1: a checkpoint and sink id of its own, locked before anything is written.
    StreamParams& params = c.config.params;
    params.checkpoint = GenerationCheckpoint(base_checkpoint_, next);
    params.app_id = GenerationAppId(base_app_id_, next);
    c.checkpoint.emplace(params.checkpoint);
    c.checkpoint->Create();
    lock_ = CheckpointLock::Acquire(params.checkpoint);
    lock_->RecordOwner();
    c.checkpoint->Check(Identity());
    c.checkpoint->ClaimFor(Identity());

    BootstrapRequest request = BootstrapRequestFor();
    request.kind = "resnapshot";
    request.generation = next;
    request.lost_from_ts = last.commit_ts;
    request.lost_to_ts = loss->retention.watermark_ts;
    Offset snapshot;
    try {
      if (params.snapshot == SnapshotMode::kChunked) {
        snapshot = OpenChunked(request).snapshot;
        c.checkpoint->WriteSnapshot(SnapshotState{true, snapshot, 0, -1});
      } else {
        DeltaBootstrapTables tables(*c.bronze, c.facts.get(), c.write_options);
        snapshot = RunBootstrap(request, *c.source, *c.sources, *c.clock, *c.checkpoint, tables).offset;
      }
    } catch (const DataLossError&) {
      // The snapshot's own LSN was purged before it was read: a failed attempt, which counts.
      GenerationState failed = recovering;
      failed.failed_at = now;
      failed.Write(base_checkpoint_);
      throw;
    }
    c.checkpoint->WriteStart(snapshot);
    generation_ = GenerationState{next, snapshot, now, std::nullopt, std::nullopt};
    generation_.Write(base_checkpoint_);  // the commit point of the recovery
    AfterBronze(c);
    spdlog::info("capture instance '{}': generation {} starts at the re-snapshot's LSN {}",
                 c.instance.name, next, snapshot.lsn.ToString());
  }

  // The Delta tables a chunked snapshot's open and backfill read and write.
  DeltaBackfillConfig BackfillConfig() const {
    const StreamContext& c = context_;
    DeltaBackfillConfig config;
    config.target = c.config.params.target;
    config.facts_table = *c.config.params.facts_table;
    config.plans_table = PlansTableFor(c.config.params.target);
    config.checkpoint = c.config.params.checkpoint;
    config.bronze_schema = c.bronze_schema;
    config.write = c.write_options;
    config.batch_rows = c.config.source.arrow_batch_size;
    config.batch_bytes = c.arrow_batch_bytes;
    return config;
  }

  DeltaBackfillTables BackfillTablesFor() {
    StreamContext& c = context_;
    return DeltaBackfillTables(BackfillConfig(), delta::DeltaTable::Open(c.config.params.target),
                               *c.facts, *c.source, *c.sources);
  }

  // Opens the chunked snapshot of `bootstrap` (or finds it open); `found` when bronze holds a
  // snapshot of the table already, which the full bootstrap's path starts from.
  ChunkedOpenResult OpenChunked(const BootstrapRequest& bootstrap) {
    StreamContext& c = context_;
    ChunkedOpenRequest request;
    request.instance = bootstrap.instance;
    request.instances = bootstrap.instances;
    request.columns = bootstrap.columns;
    request.key_columns = bootstrap.key_columns;
    request.app_id = bootstrap.app_id;
    request.target = bootstrap.target;
    request.kind = bootstrap.kind;
    request.generation = bootstrap.generation;
    request.lost_from_ts = bootstrap.lost_from_ts;
    request.lost_to_ts = bootstrap.lost_to_ts;
    auto tables = BackfillTablesFor();
    return OpenChunkedSnapshot(request, *c.source, *c.clock, tables);
  }

  void StartBackfill() {
    StreamContext& c = context_;
    const NativeBackfillOptions& options = c.config.backfill;
    BackfillRequest request;
    request.instance = c.instance;
    request.columns = columns_;
    request.key_columns = c.config.source.snapshot_keys.value_or(std::vector<std::string>{});
    request.app_id = c.config.params.app_id;
    request.target = c.config.params.target;
    request.plans_table = PlansTableFor(c.config.params.target);
    request.chunk_rows = options.chunk_rows;
    request.target_wave_seconds = options.target_wave_seconds;
    request.min_headroom_hours = options.min_headroom_hours;
    request.partitions = options.partitions.value_or(c.partitions);
    ValidateBackfillRequest(request);
    backfill_ = std::make_unique<BackfillRunner>(std::move(request), BackfillConfig(), factory_,
                                                 *c.clock, *c.facts);
  }

  // The backfill's status into the progress; its failure is the stream's. Waves written since
  // the last look are applied to silver here, on the stream's thread (so never beside a
  // batch's apply), rather than waiting for the next batch: a quiet table, or an availableNow
  // run whose changes ended before its snapshot did, still gets them.
  void ObserveBackfill() {
    if (!backfill_) return;
    if (auto status = backfill_->status()) {
      {
        std::lock_guard lock(mu_);
        progress_.backfill = status;
      }
      if (status->chunks_done > silver_saw_chunks_ || (status->done && !silver_saw_done_)) {
        AfterBronze(context_);
        silver_saw_chunks_ = status->chunks_done;
        silver_saw_done_ = status->done;
      }
    }
    if (backfill_->ended()) {
      if (auto error = backfill_->error()) std::rethrow_exception(error);
    }
  }

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

Stream::Stream(StreamConfig config, SourceFactory source_factory) : config_(std::move(config)) {
  CheckSupported(config_);
  impl_ = std::make_unique<Impl>(config_, std::move(source_factory));
}

Stream::~Stream() = default;

void Stream::Prepare() { impl_->Prepare(); }
void Stream::Start() { impl_->Start(); }
void Stream::Stop() { impl_->Stop(); }
void Stream::StartTurns(std::function<void()> wake) { impl_->StartTurns(std::move(wake)); }
std::optional<std::chrono::steady_clock::time_point> Stream::Turn() { return impl_->Turn(); }
bool Stream::planned() const { return impl_->planned(); }
bool Stream::Await(std::optional<std::chrono::milliseconds> timeout) {
  return impl_->Await(timeout);
}
bool Stream::active() const { return impl_->active(); }
std::exception_ptr Stream::error() const { return impl_->error(); }
StreamProgress Stream::progress() const { return impl_->progress(); }
const std::string& Stream::capture_instance() const { return impl_->Name(); }
const std::vector<CapturedColumn>& Stream::captured_columns() const { return impl_->columns(); }
const std::vector<std::string>& Stream::index_columns() const { return impl_->index_columns(); }

StreamProgress Stream::Run() {
  Start();
  Await();
  if (auto error = impl_->error()) std::rethrow_exception(error);
  return impl_->progress();
}

}  // namespace mssql_cdc
