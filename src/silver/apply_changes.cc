#include "silver/apply_changes.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "delta/compute_kernels.h"
#include "delta/table.h"
#include "engine/delta_backfill_tables.h"
#include "engine/table_schemas.h"
#include "silver/apply_plan.h"
#include "silver/latest_images.h"
#include "silver/range_deletes.h"
#include "silver/silver_merge.h"
#include "silver/silver_schema.h"
#include "snapshot/plans_table.h"
#include "snapshot/snapshot_finder.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

// The oldest stamp (_start_lsn) of the rows of the waves the plan applies; empty for none.
std::string OldestWaveStamp(const delta::DeltaTable& bronze, const SilverApplyPlan& plan) {
  if (!plan.open_snapshot_lsn || plan.wave_chunks.empty()) return "";
  const auto rows = bronze.Read({{std::string(kOperationColumn), "=", "0"},
                                 {std::string(kSnapshotColumn), "=", *plan.open_snapshot_lsn}});
  std::string oldest;
  const auto lsns = rows->GetColumnByName(std::string(kStartLsnColumn));
  const auto chunks = rows->GetColumnByName(std::string(kChunkColumn));
  for (int c = 0; c < lsns->num_chunks(); ++c) {
    const auto& lsn = static_cast<const arrow::StringArray&>(*lsns->chunk(c));
    const auto& chunk = static_cast<const arrow::Int32Array&>(*chunks->chunk(c));
    for (std::int64_t i = 0; i < lsn.length(); ++i) {
      if (chunk.IsNull(i) ||
          !std::binary_search(plan.wave_chunks.begin(), plan.wave_chunks.end(), chunk.Value(i))) {
        continue;
      }
      if (oldest.empty() || lsn.GetView(i) < oldest) oldest = std::string(lsn.GetView(i));
    }
  }
  return oldest;
}

// The bronze rows the plan applies, checked to be of the table's capture instances.
std::shared_ptr<arrow::Table> RowsToApply(const delta::DeltaTable& bronze, const SilverApplyPlan& plan,
                                          const ApplyChangesOptions& options) {
  std::vector<delta::FilterTerm> filter;
  if (auto bound = SilverRowsFilter(plan, OldestWaveStamp(bronze, plan))) {
    filter.push_back({std::string(kStartLsnColumn), bound->first, bound->second});
  }
  auto rows = bronze.Read(filter);
  auto combine = [&](std::string_view name) -> std::shared_ptr<arrow::Array> {
    const auto column = rows->GetColumnByName(std::string(name));
    if (!column) return nullptr;
    auto combined = arrow::Concatenate(column->chunks());
    if (!combined.ok()) throw InternalError("reading bronze rows: " + combined.status().ToString());
    return *combined;
  };
  const auto op = std::static_pointer_cast<arrow::Int32Array>(combine(kOperationColumn));
  const auto ci = std::static_pointer_cast<arrow::StringArray>(combine(kCaptureInstanceColumn));
  const auto stamp = std::static_pointer_cast<arrow::StringArray>(combine(kSnapshotColumn));
  const auto lsn = std::static_pointer_cast<arrow::StringArray>(combine(kStartLsnColumn));
  const auto chunk = std::static_pointer_cast<arrow::Int32Array>(combine(kChunkColumn));
  arrow::BooleanBuilder keep;
  if (!keep.Reserve(rows->num_rows()).ok()) throw InternalError("selecting bronze rows");
  std::set<std::string, std::less<>> seen;
  for (std::int64_t i = 0; i < rows->num_rows(); ++i) {
    const auto instance = ci->IsNull(i) ? std::string_view() : ci->GetView(i);
    seen.emplace(instance);
    const auto own = stamp && stamp->IsValid(i) ? stamp->GetView(i) : lsn->GetView(i);
    const auto chunk_of = chunk && chunk->IsValid(i) ? std::optional<int>(chunk->Value(i)) : std::nullopt;
    keep.UnsafeAppend(PlanTakesRow(plan, op->Value(i), own, chunk_of));
  }
  CheckSilverInstances(std::vector<std::string>(seen.begin(), seen.end()), options.capture_instances,
                       options.bronze);
  std::shared_ptr<arrow::Array> mask;
  if (!keep.Finish(&mask).ok()) throw InternalError("selecting bronze rows");
  delta::EnsureComputeKernels();
  auto kept = arrow::compute::Filter(rows, mask);
  if (!kept.ok()) throw InternalError("selecting bronze rows: " + kept.status().ToString());
  return kept->table();
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
  const auto rows = RowsToApply(bronze, plan, options);
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
  const std::string max_change_lsn = NewestChangeLsn(*rows);

  if (!silver) {
    silver.emplace(delta::DeltaTable::Create(options.silver, SilverTableOptions(*bronze_schema, options.bronze, bronze_id)));
  }
  const auto images = LatestImagesOf(ranked, keys, SilverSchema(*bronze_schema));
  const auto merged = MergeIntoSilver(*silver, images, keys, result.rebuilt);
  result.upserted = merged.upserted;
  result.deleted = merged.deleted;
  result.unchanged = merged.unchanged;
  result.silver_version = merged.commit.version;

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
