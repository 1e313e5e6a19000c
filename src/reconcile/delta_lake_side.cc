#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "core/time.h"
#include "delta/compute_kernels.h"
#include "engine/delta_backfill_tables.h"
#include "reconcile/lake_side.h"
#include "snapshot/plans_table.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

std::vector<delta::AddFile> FilesOf(const delta::DeltaTable& table) {
  std::vector<delta::AddFile> files;
  for (const auto& [path, file] : table.state().files) files.push_back(file);
  return files;
}

}  // namespace

DeltaLakeSide::DeltaLakeSide(delta::DeltaTable silver, delta::DeltaTable bronze, std::optional<std::string> facts)
    : silver_(std::move(silver)), bronze_(std::move(bronze)), facts_(std::move(facts)) {}

SliceTallies DeltaLakeSide::TallySlices(const std::string& key, KeyUnit, const KeyGrid& grid) {
  SliceTallies tallies;
  silver_.ScanFiles(FilesOf(silver_), {key}, [&](const arrow::RecordBatch& batch) {
    const auto keys = KeyUnitValues(*batch.column(0));
    for (std::int64_t i = 0; i < keys->length(); ++i) {
      if (keys->IsNull(i)) continue;
      Tally& tally = tallies[SliceOf(grid, keys->Value(i))];
      ++tally.rows;
      tally.key_sum += keys->Value(i);
    }
  });
  return tallies;
}

std::int64_t DeltaLakeSide::CountRows() {
  std::int64_t rows = 0;
  const auto schema = silver_.state().schema();
  silver_.ScanFiles(FilesOf(silver_), {schema->field(0)->name()},
                    [&](const arrow::RecordBatch& batch) { rows += batch.num_rows(); });
  return rows;
}

std::shared_ptr<arrow::Table> DeltaLakeSide::RowsBetween(const std::string& key, KeyUnit unit,
                                                         std::optional<std::int64_t> lo,
                                                         std::optional<std::int64_t> hi) {
  auto literal = [&](std::int64_t value) { return unit == KeyUnit::kDay ? FormatDate(value) : std::to_string(value); };
  std::vector<delta::FilterTerm> filter;
  if (lo) filter.push_back({key, ">=", literal(*lo)});
  if (hi) filter.push_back({key, "<", literal(*hi)});
  return silver_.Read(filter);
}

void DeltaLakeSide::ScanAllRows(const std::function<void(const arrow::RecordBatch&)>& visit) {
  const auto schema = silver_.state().schema();
  std::vector<std::string> columns;
  for (const auto& field : schema->fields()) columns.push_back(field->name());
  bool seen = false;
  silver_.ScanFiles(FilesOf(silver_), columns, [&](const arrow::RecordBatch& batch) {
    if (!seen) {
      seen = true;
      visit(*ValueOrInternal(arrow::RecordBatch::MakeEmpty(batch.schema()), "reconcile: silver's rows"));
    }
    visit(batch);
  });
  if (!seen) visit(*ValueOrInternal(arrow::RecordBatch::MakeEmpty(schema), "reconcile: silver's rows"));
}

std::shared_ptr<arrow::Table> DeltaLakeSide::ChangedKeysAfter(const std::vector<std::string>& keys,
                                                              const std::string& after_lsn) {
  auto rows = bronze_.Read({{std::string(kStartLsnColumn), ">", after_lsn},
                            {std::string(kOperationColumn), "!=", "0"}});
  auto selected = rows->SelectColumns([&] {
    std::vector<int> indices;
    for (const auto& key : keys) indices.push_back(rows->schema()->GetFieldIndex(key));
    return indices;
  }());
  if (!selected.ok()) throw InternalError("reconcile: bronze keys: " + selected.status().ToString());
  return *selected;
}

std::vector<SnapshotEvent> DeltaLakeSide::SnapshotEvents() {
  if (!facts_ || !delta::DeltaTable::Exists(*facts_)) return {};
  return ReadSnapshotEvents(delta::DeltaTable::Open(*facts_), bronze_.uri());
}

std::optional<ChunkPlan> DeltaLakeSide::Plan(const std::string& app_id, const Lsn& snapshot) {
  const std::string plans = PlansTableFor(bronze_.uri());
  if (!delta::DeltaTable::Exists(plans)) return std::nullopt;
  return PlanFromTable(*delta::DeltaTable::Open(plans).Read({{"snapshot", "=", snapshot.ToString()}}), app_id, snapshot, plans);
}

std::map<int, ChunkTally> DeltaLakeSide::ChunkTallies(const std::string& snapshot_lsn) {
  // Read after the facts events (a chunk's facts row follows its bronze commit), bronze caught
  // up holds every chunk they count, so a wave that lands meanwhile is no CHUNK_ROWS failure.
  bronze_.CatchUp();
  const auto rows = bronze_.Read({{std::string(kOperationColumn), "=", "0"},
                                  {std::string(kSnapshotColumn), "=", snapshot_lsn}});
  std::map<int, ChunkTally> tallies;
  const auto chunks = rows->GetColumnByName(std::string(kChunkColumn));
  const auto stamps = rows->GetColumnByName(std::string(kStartLsnColumn));
  if (!chunks || !stamps) return tallies;
  for (int c = 0; c < chunks->num_chunks(); ++c) {
    const auto& chunk = static_cast<const arrow::Int32Array&>(*chunks->chunk(c));
    const auto& stamp = static_cast<const arrow::StringArray&>(*stamps->chunk(c));
    for (std::int64_t i = 0; i < chunk.length(); ++i) {
      if (chunk.IsNull(i)) continue;
      ChunkTally& tally = tallies[chunk.Value(i)];
      ++tally.rows;
      const std::string_view at = stamp.GetView(i);
      if (tally.oldest_stamp.empty() || at < tally.oldest_stamp) tally.oldest_stamp = std::string(at);
    }
  }
  return tallies;
}

}  // namespace mssql_cdc
