#include "engine/stream_impl.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.h"
#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/staged_files.h"
#include "engine/stream_start.h"
#include "engine/table_schemas.h"
#include "schema_change/batch_schema.h"
#include "engine/batch_agreement.h"
#include "snapshot/chunk_plan.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {

void Stream::Impl::CheckInput() {
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
  if (!started_before && !params.bootstrap &&
      c.config.source.starting_position().kind == StartingLsn::Kind::kEarliest &&
      delta::DeltaTable::Exists(params.target)) {
    CheckFreshStartOnBronze(delta::DeltaTable::Open(params.target).state().app_versions, params.app_id,
                            params.target);
  }
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

void Stream::Impl::Setup() {
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

}  // namespace mssql_cdc
