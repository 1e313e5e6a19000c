#include "silver/apply_changes.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/ascii.h"
#include "core/arrow_status.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "delta/compute_kernels.h"
#include "delta/row_filter.h"
#include "delta/table_cells.h"
#include "delta/table.h"
#include "engine/delta_backfill_tables.h"
#include "engine/table_schemas.h"
#include "silver/apply_plan.h"
#include "silver/latest_images.h"
#include "silver/range_deletes.h"
#include "silver/silver_merge.h"
#include "silver/silver_schema.h"
#include "silver/spilled_rebuild.h"
#include "snapshot/plans_table.h"
#include "snapshot/snapshot_finder.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// The data files of bronze that may hold rows matching `filter` (their stats say so, or
// they have none) and the filter bound to bronze's schema.
std::vector<delta::AddFile> FilesMatching(const delta::DeltaTable& bronze,
                                          const std::vector<delta::BoundFilterTerm>& bound) {
  std::vector<delta::AddFile> files;
  for (const auto& [path, add] : bronze.state().files) {
    const auto stats = add.stats ? delta::ParseFileStats(*add.stats) : std::nullopt;
    if (stats && !bound.empty() && delta::StatsExcludeFile(*stats, bound)) continue;
    files.push_back(add);
  }
  return files;
}

// Bronze's rows matching `filter`, a row group at a time, in the columns asked (and those the
// filter reads).
void ScanBronze(const delta::DeltaTable& bronze, const std::vector<delta::FilterTerm>& filter,
                const std::vector<std::string>& columns,
                const std::function<void(const std::shared_ptr<arrow::Table>&)>& visit) {
  const auto bound = delta::BindFilter(*bronze.state().schema(), filter);
  std::vector<std::string> read = columns;
  for (const auto& term : bound) {
    if (std::find(read.begin(), read.end(), term.column) == read.end()) read.push_back(term.column);
  }
  bronze.ScanFiles(FilesMatching(bronze, bound), read, [&](const arrow::RecordBatch& batch) {
    auto rows = ValueOrInternal(arrow::Table::FromRecordBatches({arrow::RecordBatch::Make(batch.schema(), batch.num_rows(), batch.columns())}),
                                "reading bronze rows");
    if (!bound.empty()) rows = delta::ApplyFilter(rows, bound);

    if (rows->num_rows() > 0) visit(rows);
  });
}

std::shared_ptr<arrow::Array> WholeColumnOf(const arrow::Table& rows, std::string_view name) {
  const auto column = rows.GetColumnByName(std::string(name));
  return column ? delta::WholeColumn(*column) : nullptr;
}

// The oldest stamp (_start_lsn) of the rows of the waves the plan applies; empty for none.
std::string OldestWaveStamp(const delta::DeltaTable& bronze, const SilverApplyPlan& plan) {
  if (!plan.open_snapshot_lsn || plan.wave_chunks.empty()) return "";
  std::string oldest;
  ScanBronze(bronze,
             {{std::string(kOperationColumn), "=", "0"},
              {std::string(kSnapshotColumn), "=", *plan.open_snapshot_lsn}},
             {std::string(kStartLsnColumn), std::string(kChunkColumn)}, [&](const std::shared_ptr<arrow::Table>& rows) {
               const auto lsns = std::static_pointer_cast<arrow::StringArray>(WholeColumnOf(*rows, kStartLsnColumn));
               const auto chunks = std::static_pointer_cast<arrow::Int32Array>(WholeColumnOf(*rows, kChunkColumn));
               for (std::int64_t i = 0; i < lsns->length(); ++i) {
                 if (chunks->IsNull(i) ||
                     !std::binary_search(plan.wave_chunks.begin(), plan.wave_chunks.end(), chunks->Value(i))) {
                   continue;
                 }
                 if (oldest.empty() || lsns->GetView(i) < oldest) oldest = std::string(lsns->GetView(i));
               }
             });
  return oldest;
}

// The bronze rows the plan applies, a row group at a time, checked to be of the table's capture
// instances once all are read (before anything is written). Returns the newest change LSN
// among them (empty for none).
std::string ScanRowsToApply(const delta::DeltaTable& bronze, const SilverApplyPlan& plan,
                            const ApplyChangesOptions& options,
                            const std::function<void(const std::shared_ptr<arrow::Table>&)>& visit) {
  std::vector<delta::FilterTerm> filter;
  if (auto bound = SilverRowsFilter(plan, OldestWaveStamp(bronze, plan))) {
    filter.push_back({std::string(kStartLsnColumn), bound->first, bound->second});
  }
  std::vector<std::string> columns;
  const auto schema = bronze.state().schema();
  for (const auto& field : schema->fields()) columns.push_back(field->name());
  std::set<std::string, std::less<>> seen;
  std::string newest_change;
  delta::EnsureComputeKernels();
  ScanBronze(bronze, filter, columns, [&](const std::shared_ptr<arrow::Table>& rows) {
    const auto op = std::static_pointer_cast<arrow::Int32Array>(WholeColumnOf(*rows, kOperationColumn));
    const auto ci = std::static_pointer_cast<arrow::StringArray>(WholeColumnOf(*rows, kCaptureInstanceColumn));
    const auto stamp = std::static_pointer_cast<arrow::StringArray>(WholeColumnOf(*rows, kSnapshotColumn));
    const auto lsn = std::static_pointer_cast<arrow::StringArray>(WholeColumnOf(*rows, kStartLsnColumn));
    const auto chunk = std::static_pointer_cast<arrow::Int32Array>(WholeColumnOf(*rows, kChunkColumn));
    arrow::BooleanBuilder keep;
    CheckInternal(keep.Reserve(rows->num_rows()), "selecting bronze rows");
    for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
      const auto instance = ci->IsNull(i) ? std::string_view() : ci->GetView(i);
      if (seen.find(instance) == seen.end()) seen.emplace(instance);
      const auto own = stamp && stamp->IsValid(i) ? stamp->GetView(i) : lsn->GetView(i);
      const auto chunk_of = chunk && chunk->IsValid(i) ? std::optional<int>(chunk->Value(i)) : std::nullopt;
      const bool takes = PlanTakesRow(plan, op->Value(i), own, chunk_of);
      keep.UnsafeAppend(takes);
      if (takes && op->Value(i) != 0 && lsn->GetView(i) > newest_change) newest_change = std::string(lsn->GetView(i));
    }
    const auto mask = ValueOrInternal(keep.Finish(), "selecting bronze rows");
    auto kept = ValueOrInternal(arrow::compute::Filter(rows, mask), "selecting bronze rows");
    if (kept.table()->num_rows() > 0) visit(kept.table());
  });
  CheckSilverInstances(std::vector<std::string>(seen.begin(), seen.end()), options.capture_instances,
                       options.bronze);
  return newest_change;
}

// The waves' range deletes to rank with `rows`, or null when none apply (wave_ranges.h).
std::shared_ptr<arrow::Table> WaveRangeDeletes(const std::optional<delta::DeltaTable>& silver,
                                               const SilverApplyPlan& plan, const std::string& bronze,
                                               const std::vector<std::string>& keys, const arrow::Table& rows) {
  if (!silver || !WavesMayDeleteByRange(plan)) return nullptr;
  const std::string plans_table = PlansTableFor(bronze);
  if (!delta::DeltaTable::Exists(plans_table)) return nullptr;
  const auto plan_rows = delta::DeltaTable::Open(plans_table).Read({{"snapshot", "=", *plan.open_snapshot_lsn}});
  const auto chunks = PlanFromTable(*plan_rows, plan.open_snapshot_app_id, Lsn::Parse(*plan.open_snapshot_lsn),
                                    plans_table);
  if (!chunks) return nullptr;
  const auto ranges = WaveRangesOf(plan, *chunks, keys, *rows.schema());
  if (!ranges) return nullptr;
  return RangeDeleteRows(*silver, *ranges, rows);
}

}  // namespace

ApplyResult ApplyChanges(const ApplyChangesOptions& options) {
  ApplyResult result;
  if (options.bronze.empty() || options.silver.empty() || options.control.empty()) {
    throw ConfigError("apply_changes needs bronze, silver and control tables");
  }
  if (NormalLocation(options.bronze) == NormalLocation(options.silver)) {
    throw ConfigError("the silver table " + options.silver + " is its own bronze; name another table");
  }
  if (options.capture_instances.empty()) {
    throw ConfigError("apply_changes needs the capture instance of bronze " + options.bronze);
  }
  CheckExistingTable(options.control, TableKind::kControl);
  if (!delta::DeltaTable::Exists(options.bronze)) {
    spdlog::warn("apply_changes: bronze {} does not exist yet; silver {} is left as it is",
                 options.bronze, options.silver);
    return result;
  }
  result.bronze_found = true;
  CheckExistingTable(options.bronze, TableKind::kBronze);
  if (options.facts) CheckExistingTable(*options.facts, TableKind::kFacts);

  // The verdict first: bronze read afterwards holds at least what it covers.
  const std::string verdict_name =
      options.bronze_verdict_name.empty() ? options.bronze : options.bronze_verdict_name;
  const auto bronze_verdict = ReadVerdict(options.control, verdict_name);
  const auto position = ReadSilverPosition(options.control, options.silver);
  auto bronze = delta::DeltaTable::Open(options.bronze);
  auto bronze_schema = bronze.state().schema();
  const auto keys = ResolveSilverKeys(options.keys, *bronze_schema, options.bronze);
  const std::string& bronze_id = bronze.state().metadata.id;

  std::optional<delta::DeltaTable> silver;
  if (delta::DeltaTable::Exists(options.silver)) {
    silver.emplace(delta::DeltaTable::Open(options.silver));
    CheckSilverOfBronze(*silver->state().schema(), silver->state().metadata.configuration,
                        options.silver, *bronze_schema, options.bronze, bronze_id, keys);
  }

  // Which rows: a rebuild from the newest snapshot bronze holds when silver has not been
  // rebuilt from it, else the changes past silver's position.
  std::optional<BronzeSnapshot> newest;
  // Only a snapshot newer than the one silver was rebuilt from matters: bronze files older
  // than it are not read.
  if (const auto found = FindSnapshot(bronze, options.capture_instances,
                                      position ? position->snapshot_lsn : std::nullopt)) {
    newest = BronzeSnapshot{found->offset.lsn.ToString(), found->chunked, true, {}};
    if (found->chunked) {
      RequireFactsForChunked(options.facts.has_value(), options.bronze);
      std::vector<SnapshotEvent> events;
      if (delta::DeltaTable::Exists(*options.facts)) {
        events = ReadSnapshotEvents(delta::DeltaTable::Open(*options.facts), options.bronze);
      }
      newest = ChunkedSnapshotOf(events, newest->lsn);
      // A wave's facts rows are written after its bronze commit, so bronze read again now holds
      // every wave the facts name; read before them, it could lack the newest wave, which silver
      // would then count as applied without its rows.
      bronze.CatchUp();
      bronze_schema = bronze.state().schema();
    }
  }
  const SilverApplyPlan plan = PlanSilverApply(position, newest);
  result.rebuilt = plan.rebuild;
  const auto silver_schema = SilverSchema(*bronze_schema);
  std::string max_change_lsn;
  if (plan.rebuild) {
    // A rebuild reads bronze from the snapshot on, which may be the whole table: its rows go
    // through runs spilled to disk, never all held (spilled_rebuild.h).
    SpilledRebuild rebuild(keys, *bronze_schema, silver_schema, options.budget);
    max_change_lsn = ScanRowsToApply(bronze, plan, options, [&](const std::shared_ptr<arrow::Table>& rows) {
      arrow::TableBatchReader reader(*rows);
      for (std::shared_ptr<arrow::RecordBatch> batch; reader.ReadNext(&batch).ok() && batch;) rebuild.Add(*batch);
    });
    result.bronze_rows = rebuild.rows_added();
    if (!silver) {
      silver.emplace(delta::DeltaTable::Create(options.silver, SilverTableOptions(*bronze_schema, options.bronze, bronze_id)));
    }
    const auto merged = RebuildSilver(*silver, rebuild, silver_schema, options.budget.memory_bytes);
    result.upserted = merged.upserted;
    result.deleted = merged.deleted;
    result.silver_version = merged.commit.version;
    result.runs_spilled = rebuild.runs_spilled();
    result.spilled_bytes = rebuild.spilled_bytes();
  } else {
    std::vector<std::shared_ptr<arrow::Table>> parts;
    max_change_lsn = ScanRowsToApply(bronze, plan, options,
                                     [&](const std::shared_ptr<arrow::Table>& rows) { parts.push_back(rows); });
    auto rows = parts.empty() ? ValueOrInternal(arrow::Table::MakeEmpty(bronze_schema), "reading bronze rows")
                              : ValueOrInternal(arrow::ConcatenateTables(parts), "reading bronze rows");
    parts.clear();
    result.bronze_rows = rows->num_rows();

    // Range deletes are ranked with the rows but are no change of bronze: silver's position
    // moves by the rows alone.
    std::shared_ptr<arrow::Table> ranked = rows;
    if (auto deletes = WaveRangeDeletes(silver, plan, options.bronze, keys, *rows); deletes && deletes->num_rows() > 0) {
      auto combined = arrow::ConcatenateTables({rows, deletes});
      if (!combined.ok()) throw InternalError("ranking range deletes: " + combined.status().ToString());
      ranked = *combined;
      spdlog::info("apply_changes: {} keys of silver {} inside the waves' chunks are not in them", deletes->num_rows(),
                   options.silver);
    }
    if (!silver) {
      silver.emplace(delta::DeltaTable::Create(options.silver, SilverTableOptions(*bronze_schema, options.bronze, bronze_id)));
    }
    const auto images = LatestImagesOf(ranked, keys, silver_schema);
    const auto merged = MergeIntoSilver(*silver, images, keys);
    result.upserted = merged.upserted;
    result.deleted = merged.deleted;
    result.unchanged = merged.unchanged;
    result.silver_version = merged.commit.version;
  }

  const SilverPosition moved = PositionAfter(plan, position, max_change_lsn);
  std::optional<Verdict> verdict;
  if (!options.facts) {
    spdlog::warn("apply_changes: no facts table for silver {}: its verdict does not move (give the "
                 "stream's facts table)", options.silver);
  } else if (!plan.hold_verdict) {
    verdict = bronze_verdict;
  }
  WriteSilverPosition(options.control, options.silver, position, moved, verdict);
  result.applied_lsn = moved.applied_lsn;
  if (auto now = ReadVerdict(options.control, options.silver)) result.finalized_until = now->finalized_until;
  return result;
}

}  // namespace mssql_cdc
