#include "core/facts_events.h"
#include "engine/stream_impl.h"

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/table_schemas.h"
#include "snapshot/plans_table.h"
#include "source/source_clock.h"

namespace mssql_cdc {

BootstrapRequest Stream::Impl::BootstrapRequestFor() {
  StreamContext& c = context_;
  BootstrapRequest request;
  request.subject = SnapshotSubjectFor(*c.source, c.instance, c.config.params.app_id,
                                       c.config.params.target, c.config.source.snapshot_keys);
  request.bronze_schema = c.bronze_schema;
  request.arrow_batch_size = c.config.source.arrow_batch_size;
  request.arrow_batch_bytes = c.arrow_batch_bytes;
  request.partitions = c.partitions;
  return request;
}

void Stream::Impl::ResnapshotIfLost() {
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
  request.cause = SnapshotCause{std::string(facts_event::kResnapshot), next, last.commit_ts, loss->retention.watermark_ts};
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

DeltaBackfillConfig Stream::Impl::BackfillConfig() const {
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

DeltaBackfillTables Stream::Impl::BackfillTablesFor() {
  StreamContext& c = context_;
  return DeltaBackfillTables(BackfillConfig(), delta::DeltaTable::Open(c.config.params.target),
                             *c.facts, *c.source, *c.sources);
}

ChunkedOpenResult Stream::Impl::OpenChunked(const BootstrapRequest& bootstrap) {
  StreamContext& c = context_;
  auto tables = BackfillTablesFor();
  return OpenChunkedSnapshot(bootstrap.subject, bootstrap.cause, *c.source, *c.clock, tables);
}

void Stream::Impl::StartBackfill() {
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
  CheckExistingTable(request.plans_table, TableKind::kPlans);
  backfill_ = std::make_unique<BackfillRunner>(std::move(request), BackfillConfig(), factory_,
                                               *c.clock, *c.facts);
}

void Stream::Impl::ObserveBackfill() {
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

}  // namespace mssql_cdc
