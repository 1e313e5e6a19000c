#include "engine/delta_backfill_tables.h"

#include <arrow/api.h>

#include "core/errors.h"
#include "delta/table_cells.h"
#include "engine/batch_reader.h"
#include "engine/staged_files.h"
#include "engine/table_schemas.h"
#include "snapshot/parallel_snapshot.h"
#include "snapshot/plans_table.h"

namespace mssql_cdc {
std::vector<SnapshotEvent> ReadSnapshotEvents(const delta::DeltaTable& facts, const std::string& target) {
  return SnapshotEventsOf(*facts.Read({{"target", "=", target}}));
}

std::vector<SnapshotEvent> SnapshotEventsOf(const arrow::Table& table) {
  std::vector<SnapshotEvent> events;
  for (std::int64_t r = 0; r < table.num_rows(); ++r) {
    auto event = delta::TextCell(table, "event", r);
    if (!event) continue;
    SnapshotEvent e;
    e.event = *event;
    e.app_id = delta::TextCell(table, "app_id", r).value_or("");
    e.min_lsn = delta::TextCell(table, "min_lsn", r);
    e.max_lsn = delta::TextCell(table, "max_lsn", r);
    e.rows = delta::IntCell(table, "rows", r);
    e.duration_ms = delta::IntCell(table, "duration_ms", r);
    e.detail = delta::TextCell(table, "detail", r);
    if (auto at = delta::TimestampCell(table, "started_at", r)) e.started_at = UtcMicros{*at};
    if (auto at = delta::TimestampCell(table, "written_at", r)) e.written_at = UtcMicros{*at};
    events.push_back(std::move(e));
  }
  return events;
}

DeltaBackfillTables::DeltaBackfillTables(DeltaBackfillConfig config, delta::DeltaTable bronze,
                                         delta::GroupedAppender& facts, Source& first_source,
                                         SourcePool& sources)
    : config_(std::move(config)), bronze_(std::move(bronze)), facts_(facts), first_source_(first_source),
      sources_(sources) {}

std::vector<SnapshotEvent> DeltaBackfillTables::SnapshotEvents() {
  if (!delta::DeltaTable::Exists(config_.facts_table)) return {};
  return ReadSnapshotEvents(delta::DeltaTable::Open(config_.facts_table), config_.target);
}

std::optional<std::pair<double, double>> DeltaBackfillTables::NewestHeadroom(const std::string& app_id) {
  if (!delta::DeltaTable::Exists(config_.facts_table)) return std::nullopt;
  auto rows = delta::DeltaTable::Open(config_.facts_table).Read({{"app_id", "=", app_id}});
  std::optional<std::pair<double, std::int64_t>> newest;
  for (std::int64_t r = 0; r < rows->num_rows(); ++r) {
    if (delta::TextCell(*rows, "event", r)) continue;
    const auto headroom = delta::DoubleCell(*rows, "retention_headroom_hours", r);
    const auto written = delta::TimestampCell(*rows, "written_at", r);
    if (!headroom || !written) continue;
    if (!newest || *written > newest->second) newest = {*headroom, *written};
  }
  if (!newest) return std::nullopt;
  const double age = static_cast<double>(NowUtc().value - newest->second) / kMicrosPerHour;
  return std::pair{newest->first, age};
}

std::optional<std::vector<std::string>> DeltaBackfillTables::PlansColumns() {
  if (!delta::DeltaTable::Exists(config_.plans_table)) return std::nullopt;
  return delta::DeltaTable::Open(config_.plans_table).state().schema()->field_names();
}

std::optional<ChunkPlan> DeltaBackfillTables::ReadPlan(const std::string& app_id, const Lsn& snapshot) {
  if (!delta::DeltaTable::Exists(config_.plans_table)) return std::nullopt;
  auto rows = delta::DeltaTable::Open(config_.plans_table).Read({{"snapshot", "=", snapshot.ToString()}});
  return PlanFromTable(*rows, app_id, snapshot, config_.plans_table);
}

bool DeltaBackfillTables::WritePlan(const std::shared_ptr<arrow::RecordBatch>& rows,
                                    const delta::Txn& txn) {
  auto plans = OpenOrCreateTable(config_.plans_table, PlansTableOptions());
  delta::AppendOptions options;
  options.txn = txn;
  return plans.Append({rows}, options).written;
}

std::pair<std::int64_t, std::optional<std::string>> DeltaBackfillTables::LastWave(
    const std::string& txn_app_id) {
  bronze_.Refresh();
  auto held = bronze_.CommitHoldingTxn(txn_app_id);
  const auto& versions = bronze_.state().app_versions;
  auto version = versions.find(txn_app_id);
  if (version == versions.end()) return {-1, std::nullopt};
  return {version->second, held ? held->user_metadata : std::nullopt};
}

std::map<int, std::int64_t> DeltaBackfillTables::ChunkRows(const Lsn& snapshot) {
  std::map<int, std::int64_t> rows;
  const std::string stamp = snapshot.ToString();
  std::vector<delta::AddFile> files;
  for (const auto& [path, add] : bronze_.state().files) files.push_back(add);
  bronze_.ScanFiles(files, {"_snapshot", "_chunk"}, [&](const arrow::RecordBatch& batch) {
    const auto& snapshots = static_cast<const arrow::StringArray&>(*batch.column(0));
    const auto& chunks = static_cast<const arrow::Int32Array&>(*batch.column(1));
    for (std::int64_t i = 0; i < batch.num_rows(); ++i) {
      if (snapshots.IsNull(i) || chunks.IsNull(i) || snapshots.GetView(i) != stamp) continue;
      ++rows[chunks.Value(i)];
    }
  });
  return rows;
}

WaveWritten DeltaBackfillTables::AppendWave(
    const WaveRead& wave, const delta::Txn& txn,
    const std::function<std::string(const WaveWritten&)>& metadata) {
  WaveWritten written;
  StagedFileList staged_files(config_.checkpoint, "backfill");
  delta::AppendOptions options;
  options.txn = txn;
  options.write = config_.write;
  options.write.on_file = staged_files.For(kStagedBronze);
  bronze_.Refresh();
  auto staged = bronze_.StageAppend(config_.bronze_schema, options);
  if (staged.held_version()) return written;

  ParallelSnapshotRequest request;
  request.capture_instance = wave.capture_instance;
  request.plan.kind = RangeKind::kKeyset;
  request.plan.key_columns = wave.keys;
  for (const auto& chunk : wave.chunks) request.plan.ranges.push_back(KeyRange{chunk.lo, chunk.hi});
  request.snapshot_lsn = wave.stamp.lsn;
  request.snapshot_commit_ts = wave.stamp.commit_ts.value_or(UtcMicros{});
  request.batch_rows = config_.batch_rows;
  request.batch_bytes = config_.batch_bytes;
  const auto schema = config_.bronze_schema;
  const std::string snapshot = wave.snapshot.ToString();
  std::vector<int> indexes;
  for (const auto& chunk : wave.chunks) indexes.push_back(chunk.index);
  ParallelSnapshot reader(std::move(request), first_source_, sources_,
                          {schema, [schema, snapshot, indexes](const auto& batch, std::size_t range) {
                             return AlignToBronze(batch, schema, std::nullopt, snapshot,
                                                  indexes[range]);
                           }});
  auto files = reader.WriteInto([&](std::size_t range) { return staged.NewFileStream(range); });
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    written.rows[indexes[i]] = reader.range_rows(i);
    written.seconds[indexes[i]] = reader.range_seconds(i);
  }
  staged.set_user_metadata(metadata(written));
  const auto commit = bronze_.CommitStaged(staged, files);
  staged_files.Clear();
  if (!commit.written) return WaveWritten{};
  return written;
}

void DeltaBackfillTables::AppendFacts(const std::shared_ptr<arrow::RecordBatch>& rows,
                                      const delta::Txn& txn) {
  facts_.Append({rows}, txn);
}

std::optional<FoundSnapshot> DeltaBackfillTables::FindSnapshot(const std::vector<std::string>& instances) {
  bronze_.Refresh();
  return mssql_cdc::FindSnapshot(bronze_, instances);
}

}  // namespace mssql_cdc
