#include "feed/change_feed.h"

#include <arrow/type.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/backfill.h"
#include "engine/bootstrap.h"
#include "engine/staged_files.h"
#include "engine/stream_checkpoint.h"
#include "engine/stream_start.h"
#include "engine/table_schemas.h"
#include "schema_change/table_columns.h"
#include "schema_change/table_instances.h"
#include "source/output_schema.h"
#include "source/source_clock.h"

namespace mssql_cdc {
namespace {

std::unique_ptr<Source> OpenChecked(const SourceOptions& options, SourceFactory& factory) {
  ChangeFeed::CheckOptions(options);
  if (!factory) factory = MakeSourceFactory(options);
  return factory();
}

}  // namespace

void ChangeFeed::CheckOptions(const SourceOptions& options) {
  if (options.capture_instance.empty()) {
    throw ConfigError("option 'captureInstance' is required: name the capture instance to read");
  }
}

ChangeFeed::ChangeFeed(SourceOptions options, SourceFactory factory,
                       std::shared_ptr<arrow::Schema> query_schema)
    : options_(std::move(options)),
      factory_(std::move(factory)),
      source_(OpenChecked(options_, factory_)),
      instance_(source_->ResolveCaptureInstance(options_.capture_instance)),
      clock_(ResolveSourceClock(*source_, options_.source_time_zone)),
      columns_(ResolveStreamColumns(*source_, ListInstances(), options_.columns)),
      output_schema_(query_schema ? std::move(query_schema)
                                  : OutputSchema(columns_.fields, options_.include_command_id)) {}

mssql_cdc::TableInstances ChangeFeed::ListInstances() {
  return mssql_cdc::TableInstances::Of(*source_, instance_);
}

BatchSchemaRules ChangeFeed::SchemaRules() const {
  BatchSchemaRules rules;
  for (const auto& field : output_schema_->fields()) {
    if (!IsReservedColumnName(field->name())) rules.reads.push_back(field);
  }
  rules.columns_given = columns_.listed;
  rules.policy = options_.schema_change_policy;
  return rules;
}

std::vector<SchemaEvent> ChangeFeed::SchemaEvents(const Offset& start, const Offset& end) {
  BatchSchema schema = PlannedSchema(Planned(start, end));
  for (const auto& warning : schema.warnings) spdlog::warn("{}", warning);
  for (auto& event : schema.events) {
    if (auto local = source_->CommitTime(event.lsn)) event.commit_ts = clock_.ToUtc(*local);
  }
  return schema.events;
}

ChangeFeed::PlannedBatch ChangeFeed::PlanRetention(const Offset& start, const Offset& end,
                                                   mssql_cdc::TableInstances instances) {
  const Lsn first = start.lsn.Increment();
  PlannedBatch batch{start.lsn, end.lsn, std::move(instances), "", {}, std::nullopt, std::nullopt};
  batch.serving = batch.instances.NameAt(first, instance_.name);
  batch.retention = ReadRetention(*source_, clock_, batch.serving);
  if (mssql_cdc::Purged(batch.retention, first)) {
    if (options_.fail_on_data_loss) {
      CheckNotDisabledTooEarly(batch.instances, options_.capture_instance, start);
    }
    batch.purged = PurgedRange{first, batch.retention};
  }
  return batch;
}

ChangeFeed::PlannedBatch& ChangeFeed::Planned(const Offset& start, const Offset& end) {
  if (!planned_ || planned_->start != start.lsn || planned_->end != end.lsn) {
    planned_ = PlanRetention(start, end, ListInstances());
  }
  return *planned_;
}

const BatchSchema& ChangeFeed::PlannedSchema(PlannedBatch& batch) {
  if (!batch.schema) {
    batch.schema = ReadBatchSchema(*source_, batch.instances, SchemaRules(), batch.start, batch.end);
  }
  return *batch.schema;
}

std::vector<std::string> ChangeFeed::TableInstances() {
  return InstancesOfTable(source_->ListCaptureInstances(), instance_);
}

Offset ChangeFeed::InitialOffset() {
  return mssql_cdc::InitialOffset(*source_, clock_, instance_, options_.starting_position());
}

std::optional<Offset> ChangeFeed::MaxOffset() {
  const std::optional<Lsn> max_lsn = source_->MaxLsn();
  if (!max_lsn) return std::nullopt;
  Offset offset{*max_lsn, std::nullopt};
  if (auto local = source_->CommitTimeAtOrBefore(*max_lsn)) offset.commit_ts = clock_.ToUtc(*local);
  return offset;
}

Offset ChangeFeed::LatestOffset(const Offset& start, std::optional<std::int64_t> max_commits,
                                std::optional<Lsn> target) {
  planned_.reset();
  if (!target) target = source_->MaxLsn();
  if (!target) return start;
  mssql_cdc::TableInstances instances = ListInstances();
  if (auto limit = PendingEnableLimit(*source_, instances); limit && *limit < *target) {
    target = *limit;
  }
  std::optional<Offset> end = BatchPlanner::PlanEnd(*source_, clock_, start, *target, max_commits);
  if (!end) return start;
  PlannedBatch batch = PlanRetention(start, *end, std::move(instances));
  if (batch.purged && options_.fail_on_data_loss) {
    ThrowDataLoss(instance_.name, start, batch.purged->retention, std::nullopt,
                  /*during_read=*/false);
  }
  BatchSchema schema =
      ReadBatchSchema(*source_, batch.instances, SchemaRules(), start.lsn, end->lsn);
  const auto plan = [&](const Offset& batch_end, BatchSchema batch_schema) {
    batch.end = batch_end.lsn;
    batch.schema = std::move(batch_schema);
    planned_ = std::move(batch);
    return batch_end;
  };
  if (schema.not_held.empty()) return plan(*end, std::move(schema));
  // A query's schema is fixed while it runs: it reads up to the newer instance's start, and
  // stops there.
  for (const auto& change : columns_.listed ? std::vector<InstanceSwitch>{} : schema.switches) {
    if (ColumnsNotHeld(SchemaRules().reads, source_->CapturedColumns(change.to.name)).empty()) continue;
    if (auto before = BatchPlanner::PlanEnd(*source_, clock_, start, change.to.start_lsn.Decrement(),
                                            max_commits)) {
      BatchSchema upto =
          ReadBatchSchema(*source_, batch.instances, SchemaRules(), start.lsn, before->lsn);
      if (upto.not_held.empty()) return plan(*before, std::move(upto));
    }
    break;
  }
  ThrowNotHeld(schema, batch.instances.table());
}

std::optional<PurgedRange> ChangeFeed::Purged(const Offset& start) {
  if (planned_ && planned_->start == start.lsn) return planned_->purged;
  return PlanRetention(start, start, ListInstances()).purged;
}

std::optional<LossFound> ChangeFeed::FindLoss(const Offset& last_processed) {
  return mssql_cdc::FindLoss(*source_, clock_, instance_.name, last_processed);
}

std::vector<LsnRange> ChangeFeed::Partitions(const Offset& start, const Offset& end) {
  if (end.lsn <= start.lsn) return {};
  const PlannedBatch& batch = Planned(start, end);
  Lsn from = start.lsn.Increment();
  if (const auto& purged = batch.purged) {
    if (options_.fail_on_data_loss) {
      ThrowDataLoss(instance_.name, start, purged->retention, std::nullopt,
                    /*during_read=*/false);
    }
    spdlog::warn("capture instance '{}': CDC cleanup purged changes after LSN {} up to LSN {}; "
                 "failOnDataLoss=false, so the batch reads from LSN {}",
                 instance_.name, start.lsn.ToString(), purged->retention.min_lsn.ToString(),
                 purged->retention.min_lsn.ToString());
    from = purged->retention.min_lsn;
  }
  if (end.lsn < from) return {};
  return SplitSegments(*source_, batch.instances.Segments(from, end.lsn), from,
                       ReadPartitions(options_));
}

RangeMeasures ChangeFeed::MeasureEmptyRead(const Offset& start, const Offset& end) {
  RangeMeasures measures;
  measures.from = start.lsn.Increment();
  measures.to = end.lsn;
  const PlannedBatch& batch = Planned(start, end);
  const std::string serving = batch.instances.NameAt(end.lsn, instance_.name);
  // The end measured now, as a task measures it when its read ends; the retention is the
  // planning's when the instance serving the end is the one serving the start.
  measures.end = MeasureEnd(*source_, clock_,
                            serving == batch.serving ? batch.retention
                                                     : ReadRetention(*source_, clock_, serving));
  return measures;
}

Offset ChangeFeed::Bootstrap(const FeedBootstrapRequest& request) {
  delta::DeltaTable bronze =
      OpenOrCreateTable(request.target, BronzeTableOptions(output_schema_, instance_.name));
  std::optional<delta::GroupedAppender> facts;
  if (request.facts_table) {
    facts.emplace(OpenOrCreateTable(*request.facts_table, FactsTableOptions()));
  }
  // Files of a snapshot that a crash stopped before its commit: nobody will name them.
  DeleteUncommittedStagedFiles(request.state_dir, [&](const std::string& table,
                                                      const std::vector<std::string>& paths) {
    if (table == kStagedBronze) bronze.DeleteUnnamedFiles(paths);
  });
  DeltaBootstrapTables tables(bronze, facts ? &*facts : nullptr);
  return Bootstrap(request, tables);
}

void ChangeFeed::CheckBootstrap(const FeedBootstrapRequest& request, SnapshotMode mode) const {
  StreamParams params;
  params.target = request.target;
  params.app_id = request.app_id;
  params.checkpoint = request.state_dir;
  params.facts_table = request.facts_table;
  params.bootstrap = true;
  params.snapshot = mode;
  ValidateStreamConfig(options_, params);
}

Offset ChangeFeed::Bootstrap(const FeedBootstrapRequest& request, BootstrapTables& tables) {
  CheckBootstrap(request, SnapshotMode::kFull);

  StreamCheckpoint state(request.state_dir);
  state.ClaimFor({request.app_id, instance_.name, request.target});
  BootstrapRequest snapshot;
  snapshot.subject = SnapshotSubjectFor(*source_, instance_, request.app_id, request.target,
                                        options_.snapshot_keys);
  snapshot.cause = request.cause;
  snapshot.bronze_schema = BronzeSchema(output_schema_);
  snapshot.arrow_batch_size = options_.arrow_batch_size;
  snapshot.partitions = ReadPartitions(options_);
  // The feed's own Source reads the first range; the others open their own for the snapshot.
  SourcePool sources(factory_, std::max(1, snapshot.partitions - 1));
  const Offset start = RunBootstrap(snapshot, *source_, sources, clock_, state, tables).offset;
  if (!state.ReadStart()) state.WriteStart(start);
  return start;
}

std::optional<Offset> ChangeFeed::OpenChunked(const FeedBootstrapRequest& request,
                                              BackfillTables& tables) {
  CheckBootstrap(request, SnapshotMode::kChunked);
  const SnapshotSubject subject = SnapshotSubjectFor(*source_, instance_, request.app_id,
                                                     request.target, options_.snapshot_keys);
  const ChunkedOpenResult result =
      OpenChunkedSnapshot(subject, request.cause, *source_, clock_, tables);
  if (result.found) return std::nullopt;
  return result.snapshot;
}

BackfillStatus ChangeFeed::Backfill(BackfillRequest request, BackfillTables& tables) {
  request.instance = instance_;
  request.columns = source_->CapturedColumns(instance_.name);
  request.key_columns = options_.snapshot_keys.value_or(std::vector<std::string>{});
  request.partitions = ReadPartitions(options_);
  SourcePool more(factory_, std::max(1, request.partitions - 1));
  return RunBackfill(request, *source_, more, clock_, tables);
}

std::optional<Offset> NativeHandoverOffset(const std::string& checkpoint_dir) {
  const StreamCheckpoint checkpoint(checkpoint_dir);
  const std::optional<StreamIdentity> identity = checkpoint.ReadIdentity();
  if (!identity) {
    throw NotFoundError("no native stream checkpoint at " + checkpoint_dir +
                        ": it has no stream.json; give the checkpoint directory of a stream "
                        "that has run");
  }
  const RecoveryPoint point = checkpoint.Recover();
  if (point.next_start) return point.next_start;
  if (point.replay) {
    // The batch a restart would replay: its rows are in bronze when its append landed.
    if (delta::DeltaTable::Exists(identity->target)) {
      const auto& held = delta::DeltaTable::Open(identity->target).state().app_versions;
      if (auto it = held.find(identity->app_id);
          it != held.end() && it->second >= point.replay->batch_id) {
        return point.replay->end;
      }
    }
    return point.replay->start;
  }
  return checkpoint.ReadStart();
}

}  // namespace mssql_cdc
