#include "core/facts_events.h"
#include "engine/stream_batch.h"

#include <algorithm>

#include <arrow/api.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/phase_log.h"
#include "engine/batch_agreement.h"
#include "engine/batch_measures.h"
#include "engine/batch_reader.h"
#include "engine/finalization.h"
#include "engine/retention_guard.h"
#include "engine/checkpoint_directory.h"
#include "engine/staged_files.h"
#include "source/output_schema.h"
#include "plan/planner.h"
#include "schema_change/table_columns.h"
#include "engine/table_schemas.h"
#include "engine/switch_snapshot.h"
#include "source/column_selection.h"

namespace mssql_cdc {
namespace {

std::int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace

std::string FactsTxnAppId(const std::string& app_id) { return app_id + "#facts"; }

RowStats BronzeBatchStats(delta::DeltaTable& bronze, const std::string& app_id,
                          std::int64_t batch_id) {
  const auto held = bronze.CommitHoldingTxn(app_id);
  std::optional<std::vector<delta::AddFile>> files;
  if (held && held->txn_version == batch_id) files = bronze.FilesAddedBy(held->table_version);
  if (!files) {
    // The commit is gone from the log (an old batch after log cleanup): its rows say.
    files.emplace();
    for (const auto& [path, add] : bronze.state().files) files->push_back(add);
  }
  RowStats stats;
  bronze.ScanFiles(*files, {std::string(kBatchIdColumn), std::string(kOperationColumn),
                            std::string(kStartLsnColumn), std::string(kCommitTsColumn)},
                   [&](const arrow::RecordBatch& rows) {
                     const auto& ids = static_cast<const arrow::Int32Array&>(*rows.column(0));
                     // A commit of this batch holds only its rows; the fallback scans all.
                     std::int64_t begin = 0;
                     while (begin < rows.num_rows()) {
                       while (begin < rows.num_rows() &&
                              (ids.IsNull(begin) || ids.Value(begin) != batch_id)) ++begin;
                       std::int64_t end = begin;
                       while (end < rows.num_rows() && !ids.IsNull(end) && ids.Value(end) == batch_id) ++end;
                       if (end > begin) stats.Add(StatsOf(*rows.Slice(begin, end - begin)));
                       begin = end;
                     }
                   });
  return stats;
}

void FillRowStats(FactsRow& row, const RowStats& stats) {
  row.rows = stats.rows;
  row.deletes = stats.deletes;
  row.inserts = stats.inserts;
  row.updates = stats.updates;
  if (stats.rows > 0) {
    row.min_lsn = stats.min_lsn;
    row.max_lsn = stats.max_lsn;
    row.min_commit_ts = stats.min_commit_ts;
    row.max_commit_ts = stats.max_commit_ts;
  }
}

FactsRow DataSkippedRow(const std::string& app_id, const std::string& target,
                        const BatchOffsets& offsets, bool certain,
                        const std::optional<UtcMicros>& lost_to_ts, const std::string& reason) {
  FactsRow row;
  row.app_id = app_id;
  row.batch_id = offsets.batch_id;
  row.rows = 0;
  row.event = facts_event::kDataSkipped;
  const Lsn resumed = offsets.read_from.value_or(offsets.start.lsn.Increment());
  row.min_lsn = row.max_lsn = resumed.ToString();
  row.lost_from_ts = offsets.start.commit_ts;
  row.lost_to_ts = lost_to_ts;
  nlohmann::json detail = {{"from", offsets.start.lsn.ToString()},
                           {"to", resumed.ToString()},
                           {"certain", certain}};
  if (!reason.empty()) detail["reason"] = reason;
  row.detail = detail.dump();
  row.end_lsn = offsets.end.lsn.ToString();
  row.end_commit_ts = offsets.end.commit_ts;
  row.target = target;
  return row;
}

FactsRow SchemaEventRow(const std::string& app_id, const std::string& target,
                        std::int64_t batch_id, const SchemaEvent& event) {
  FactsRow row;
  row.app_id = app_id;
  row.batch_id = batch_id;
  row.rows = 0;
  row.event = event.event;
  row.min_lsn = row.max_lsn = row.end_lsn = event.lsn.ToString();
  row.end_commit_ts = event.commit_ts;
  row.detail = event.detail;
  row.target = target;
  return row;
}

void BatchRunner::SnapshotIfSwitched(const BatchOffsets& offsets, StagedFileList* staged_files) {
  StreamContext& c = context_;
  if (!c.config.params.snapshot_on_switch || !switched_to_) return;
  // A replayed batch has no list of its own yet: the snapshot's files need one.
  std::optional<StagedFileList> own;
  if (!staged_files) {
    own.emplace(c.checkpoint->directory(), std::to_string(offsets.batch_id));
    staged_files = &*own;
  }
  SwitchSnapshotRequest request;
  request.instance = *switched_to_;
  request.columns = NamesCaptured(c.source->CapturedColumns(switched_to_->name),
                                  [&] {
                                    std::vector<std::string> names;
                                    for (const auto& column : c.columns) names.push_back(column.name);
                                    return names;
                                  }());
  request.bronze_schema = c.bronze_schema;
  request.app_id = c.config.params.app_id;
  request.batch_id = offsets.batch_id;
  request.partitions = c.partitions;
  request.arrow_batch_size = c.config.source.arrow_batch_size;
  request.arrow_batch_bytes = c.arrow_batch_bytes;
  request.write = c.write_options;
  request.write.on_file = staged_files->For(kStagedBronze);
  SnapshotAfterSwitch(request, *c.source, *c.sources, *c.clock, *c.bronze);
  if (own) own->Clear();
}

std::string_view BatchStepName(BatchStep step) {
  switch (step) {
    case BatchStep::kOffsetsWritten: return "offsets_written";
    case BatchStep::kBronzeAppended: return "bronze_appended";
    case BatchStep::kFactsAppended: return "facts_appended";
    case BatchStep::kCommitted: return "committed";
  }
  return "unknown";
}

void BatchRunner::Hook(BatchStep step, std::int64_t batch_id) {
  NotePhase(context_.config.source.capture_instance + " batch " + std::to_string(batch_id) + " " +
            std::string(BatchStepName(step)));
  if (context_.config.step_hook) context_.config.step_hook(step, batch_id);
}

void NoteInstances(StreamContext& context, const std::vector<CaptureInstanceInfo>& instances) {
  for (const auto& instance : instances) {
    auto& names = context.instance_names;
    if (std::find(names.begin(), names.end(), instance.name) == names.end()) names.push_back(instance.name);
  }
}

void AfterBronze(const StreamContext& context) {
  if (!context.config.after_bronze) return;
  context.config.after_bronze({context.instance_names, context.instance.index_columns});
}

TableInstances BatchRunner::ListInstances() {
  auto instances = TableInstances::Of(*context_.source, context_.instance);
  NoteInstances(context_, instances.all());
  return instances;
}

std::optional<BatchOffsets> BatchRunner::Plan(std::int64_t batch_id, const Offset& start,
                                              const Lsn& target) {
  const TableInstances instances = ListInstances();
  Lsn until = target;
  if (auto limit = PendingEnableLimit(*context_.source, instances); limit && *limit < until) {
    spdlog::info("capture instance '{}': a newer capture instance of {} waits for the capture "
                 "process; the batch ends at LSN {}, before its enable",
                 context_.instance.name, instances.table(), limit->ToString());
    until = *limit;
  }
  auto end = BatchPlanner::PlanEnd(*context_.source, *context_.clock, start, until,
                                   context_.config.source.max_commits_per_batch);
  if (!end) return std::nullopt;
  BatchOffsets offsets{batch_id, start, *end, std::nullopt, std::nullopt};
  CheckBeforeRead(offsets, instances);
  context_.checkpoint->WriteOffsets(offsets);
  Hook(BatchStep::kOffsetsWritten, batch_id);
  return offsets;
}

bool BatchRunner::CheckBeforeRead(BatchOffsets& offsets, const TableInstances& instances) {
  const Lsn first = offsets.start.lsn.Increment();
  if (instances.active().empty()) {
    throw NotFoundError("no capture instance of " + instances.table() +
                        " has started capturing yet: wait for the capture process to reach the "
                        "enable (sys.fn_cdc_get_min_lsn is 0x00000000000000000000 until then)");
  }
  const std::string ci = instances.At(first).name;
  const Retention retention = ReadRetention(*context_.source, *context_.clock, ci);
  if (!Purged(retention, first)) return false;
  if (context_.config.source.fail_on_data_loss) {
    CheckNotDisabledTooEarly(instances, context_.config.source.capture_instance, offsets.start);
  }
  if (context_.config.source.fail_on_data_loss) {
    ThrowDataLoss(ci, offsets.start, retention, offsets.batch_id, /*during_read=*/false);
  }
  if (offsets.read_from == retention.min_lsn) return false;
  spdlog::warn(
      "capture instance '{}': CDC cleanup purged changes after LSN {} up to LSN {} before "
      "batch {} read them; failOnDataLoss=false, so the batch goes on from LSN {} and the gap "
      "is recorded in the facts as data_skipped",
      ci, offsets.start.lsn.ToString(), retention.min_lsn.ToString(), offsets.batch_id,
      retention.min_lsn.ToString());
  offsets.read_from = retention.min_lsn;
  offsets.lost_to_ts = retention.watermark_ts;
  return true;
}

FactsRow BatchRunner::SkippedRow(const BatchOffsets& offsets, bool certain,
                                 const std::optional<UtcMicros>& lost_to_ts,
                                 const std::string& reason) {
  return DataSkippedRow(context_.config.params.app_id, context_.config.params.target, offsets,
                        certain, lost_to_ts, reason);
}

void BatchRunner::Measure(FactsRow& row, const BatchOffsets& offsets,
                          const std::vector<RangeMeasures>& ranges,
                          const std::optional<Retention>& after_read) {
  row.end_lsn = offsets.end.lsn.ToString();
  row.end_commit_ts = offsets.end.commit_ts;
  const Retention retention =
      after_read ? *after_read
                 : ReadRetention(*context_.source, *context_.clock,
                                 ListInstances().At(offsets.end.lsn).name);
  FoldMeasures(row, ranges, MeasureEnd(*context_.source, *context_.clock, retention));
}

BatchOutcome BatchRunner::Execute(BatchOffsets offsets) {
  StreamContext& c = context_;
  const std::string& app_id = c.config.params.app_id;
  const BronzeCheck check{app_id, c.config.params.checkpoint, c.bronze_txn,
                          !c.bronze_range_checked};
  const bool in_bronze = CheckBronzeAgrees(*c.bronze, *c.checkpoint, check, offsets);
  c.bronze_range_checked = true;
  const TableInstances instances = ListInstances();
  if (in_bronze) return FinishFromBronze(offsets, instances);
  if (CheckBeforeRead(offsets, instances)) c.checkpoint->WriteOffsets(offsets);

  FactsRow row;
  row.app_id = app_id;
  row.batch_id = offsets.batch_id;
  row.started_at = NowUtc();
  row.target = c.config.params.target;
  const auto started = std::chrono::steady_clock::now();

  const Lsn from = offsets.read_from.value_or(offsets.start.lsn.Increment());
  // The instance serving the range's start: its retention decides whether the range was read
  // whole.
  const std::string ci = instances.At(from).name;
  BatchSchema schema;
  std::vector<FactsRow> schema_events = FollowSchema(offsets, instances, schema);
  const std::vector<LsnRange> ranges = SplitSegments(*c.source, schema.segments, from, c.partitions);
  BatchReadRequest request;
  request.capture_instance = ci;
  request.ranges = ranges;
  request.bronze_schema = c.bronze_schema;
  if (c.columns_listed) {
    for (const auto& column : c.columns) request.columns.push_back(column.name);
  }
  request.batch_id = offsets.batch_id;
  request.include_command_id = c.config.source.include_command_id;
  request.arrow_batch_size = c.config.source.arrow_batch_size;
  request.arrow_batch_bytes = c.arrow_batch_bytes;
  delta::AppendOptions append;
  append.txn = delta::Txn{app_id, offsets.batch_id, std::nullopt};
  append.write = c.write_options;
  StagedFileList staged_files(c.checkpoint->directory(), std::to_string(offsets.batch_id));
  append.write.on_file = staged_files.For(kStagedBronze);
  delta::DeltaTable::Staged staged = c.bronze->StageAppend(c.bronze_schema, append);
  BatchRead read = ReadBatchRanges(request, *c.source, *c.sources, *c.clock,
                                   [&](std::size_t range) { return staged.NewFileStream(range); });

  std::vector<FactsRow> events = std::move(schema_events);
  if (offsets.read_from) events.push_back(SkippedRow(offsets, true, offsets.lost_to_ts, ""));
  // Cleanup during the read leaves the change table with less than the range held; only the
  // min LSN now tells.
  const Retention after = ReadRetention(*c.source, *c.clock, ci);
  if (Purged(after, from)) {
    if (c.config.source.fail_on_data_loss) {
      ThrowDataLoss(ci, offsets.start, after, offsets.batch_id, /*during_read=*/true);
    }
    BatchOffsets lost = offsets;
    lost.read_from = after.min_lsn;
    events.push_back(SkippedRow(lost, false, after.watermark_ts,
                                "CDC cleanup passed the range's start while it was read"));
  }

  FillRowStats(row, read.stats);
  Measure(row, offsets, read.measures, after);

  std::int64_t version = -1;
  if (read.stats.rows > 0) {
    staged.set_user_metadata(BatchUserMetadata(row, offsets.start.lsn.ToString()));
    const delta::CommitResult appended = c.bronze->CommitStaged(staged, read.files);
    // Bronze took the txn between the check and the append: only another writer does that.
    if (!appended.written) CheckHeldBatchAgrees(*c.bronze, check, offsets);
    version = appended.version;
  }
  Hook(BatchStep::kBronzeAppended, offsets.batch_id);
  row.duration_ms = MillisSince(started);
  return Finish(offsets, std::move(row), std::move(events), version, &staged_files);
}

std::vector<FactsRow> BatchRunner::FollowSchema(const BatchOffsets& offsets,
                                                const TableInstances& instances,
                                                BatchSchema& schema) {
  StreamContext& c = context_;
  BatchSchemaRules rules;
  rules.reads = c.read_fields;
  rules.columns_given = c.columns_listed;
  rules.policy = c.config.source.schema_change_policy;
  schema = ReadBatchSchema(*c.source, instances, rules, offsets.start.lsn, offsets.end.lsn);
  for (const auto& warning : schema.warnings) spdlog::warn("{}", warning);
  switched_to_.reset();
  if (!schema.switches.empty()) switched_to_ = schema.switches.back().to;
  // The types the `columns` option gives are the user's: a batch does not change them.
  if (!schema.not_held.empty() && c.columns_listed) ThrowNotHeld(schema, instances.table());
  if (!schema.not_held.empty()) {
    // A native stream evolves in place: it reads on with the table's columns as they are now,
    // and bronze takes them with this batch (new columns appended; a wider type where type
    // widening is on, else SchemaChangedError giving the ALTER TABLE, before any read).
    std::vector<CapturedColumn> columns = InferTableColumns(*c.source, instances);
    std::shared_ptr<arrow::Schema> bronze =
        BronzeSchema(OutputSchema(columns, c.config.source.include_command_id));
    c.bronze->StageAppend(bronze);  // throws when bronze cannot take it
    spdlog::info("capture instance '{}': the stream reads on with the columns of {} ({}); "
                 "bronze {} takes them with batch {}",
                 c.instance.name, schema.not_held_at, DescribeColumns(schema.not_held),
                 c.config.params.target, offsets.batch_id);
    c.read_fields = FieldsOf(columns);
    c.columns = std::move(columns);
    c.bronze_schema = std::move(bronze);
  }
  std::vector<FactsRow> rows;
  for (auto& event : schema.events) {
    if (auto local = c.source->CommitTime(event.lsn)) event.commit_ts = c.clock->ToUtc(*local);
    rows.push_back(SchemaEventRow(c.config.params.app_id, c.config.params.target,
                                  offsets.batch_id, event));
  }
  return rows;
}

BatchOutcome BatchRunner::FinishFromBronze(const BatchOffsets& offsets,
                                           const TableInstances& instances) {
  StreamContext& c = context_;
  const auto started = std::chrono::steady_clock::now();
  spdlog::info("capture instance '{}': batch {} is already in bronze; finishing it from there",
               c.instance.name, offsets.batch_id);
  FactsRow row;
  row.app_id = c.config.params.app_id;
  row.batch_id = offsets.batch_id;
  row.started_at = NowUtc();
  row.target = c.config.params.target;
  FillRowStats(row, BronzeBatchStats(*c.bronze, c.config.params.app_id, offsets.batch_id));
  Measure(row, offsets, {}, std::nullopt);  // read_seconds and read_mb stay NULL: nothing was read now
  delta::AppendOptions options;
  options.txn = delta::Txn{c.config.params.app_id, offsets.batch_id, std::nullopt};
  const std::int64_t version = c.bronze->Append({}, options).version;
  BatchSchema schema;
  std::vector<FactsRow> events = FollowSchema(offsets, instances, schema);
  if (offsets.read_from) events.push_back(SkippedRow(offsets, true, offsets.lost_to_ts, ""));
  row.duration_ms = MillisSince(started);
  return Finish(offsets, std::move(row), std::move(events), version);
}

BatchOutcome BatchRunner::Finish(const BatchOffsets& offsets, FactsRow row,
                                 std::vector<FactsRow> events, std::int64_t bronze_version,
                                 StagedFileList* staged_files) {
  StreamContext& c = context_;
  row.written_at = NowUtc();
  if (c.facts) {
    std::vector<FactsRow> rows = {row};
    for (auto& event : events) {
      event.written_at = row.written_at;
      rows.push_back(std::move(event));
    }
    c.facts->Append({FactsToRecordBatch(rows)},
                    delta::Txn{FactsTxnAppId(c.config.params.app_id), offsets.batch_id, std::nullopt},
                    staged_files ? staged_files->For(kStagedFacts) : nullptr);
  }
  Hook(BatchStep::kFactsAppended, offsets.batch_id);
  SnapshotIfSwitched(offsets, staged_files);
  BatchOutcome outcome;
  if (bronze_version >= 0) c.bronze_txn = offsets.batch_id;
  outcome.commit = BatchCommit{offsets.batch_id, bronze_version, row.rows.value_or(0), c.bronze_txn};
  outcome.end = offsets.end;
  outcome.facts = std::move(row);
  c.checkpoint->WriteCommit(outcome.commit);
  if (staged_files) staged_files->Clear();
  if (c.staged_lists_left) DeleteAbandonedStagedFiles(c);
  Hook(BatchStep::kCommitted, offsets.batch_id);
  // Data first, verdict after (invariant 2 of docs/invariants.md).
  if (c.verdicts) {
    c.verdicts->Advance(c.config.tracked_table.value_or(c.config.params.target), offsets.end);
  }
  AfterBronze(c);
  return outcome;
}

void DeleteAbandonedStagedFiles(StreamContext& c) {
  StreamCheckpoint& checkpoint = *c.checkpoint;
  const bool locked = !CheckpointDirectory(checkpoint.directory()).in_object_store();
  auto settled = [&](const std::string& unit) {
    if (locked) return true;
    if (unit == "snapshot") {
      const auto snapshot = checkpoint.ReadSnapshot();
      return snapshot && snapshot->done;
    }
    if (unit.empty() || unit.find_first_not_of("0123456789") != std::string::npos) return false;
    return checkpoint.ReadCommit(std::stoll(unit)).has_value();
  };
  const int left = DeleteSettledStagedFiles(
      checkpoint.directory(), settled,
      [&](const std::string& table, const std::vector<std::string>& paths) {
        if (table == kStagedBronze) c.bronze->DeleteUnnamedFiles(paths);
        if (table == kStagedFacts && c.facts) c.facts->DeleteUnnamedFiles(paths);
      });
  c.staged_lists_left = left > 0;
}

}  // namespace mssql_cdc
