#include "silver/apply_plan.h"

#include <algorithm>
#include <set>

#include "core/errors.h"

namespace mssql_cdc {

BronzeSnapshot ChunkedSnapshotOf(const std::vector<SnapshotEvent>& events, const std::string& lsn) {
  BronzeSnapshot snapshot{lsn, true, false, {}};
  // The stream (or generation) that opened it: its facts rows say which chunks are in and
  // whether it is complete.
  std::set<std::string> app_ids;
  for (const auto& event : events) app_ids.insert(event.app_id);
  for (const auto& app_id : app_ids) {
    const auto progress = NewestChunked(events, app_id);
    if (!progress || progress->opened.snapshot.ToString() != lsn) continue;
    snapshot.complete = progress->opened.complete;
    snapshot.app_id = progress->opened.app_id;
    for (const auto& chunk : progress->chunks) {
      snapshot.chunk_waves.emplace_back(chunk.chunk, chunk.wave);
      if (!chunk.stamp.empty()) snapshot.chunk_stamps[chunk.chunk] = chunk.stamp;
    }
    break;
  }
  return snapshot;
}

void RequireFactsForChunked(bool has_facts, const std::string& bronze_name) {
  if (has_facts) return;
  throw ConfigError("bronze " + bronze_name + " holds the rows of a chunked snapshot; give the stream's facts "
                    "table so that apply_changes can tell which waves are in and whether it is complete");
}

SilverApplyPlan PlanSilverApply(const std::optional<SilverPosition>& position,
                                const std::optional<BronzeSnapshot>& newest) {
  SilverApplyPlan plan;
  const bool usable = newest && (!newest->chunked || newest->complete);
  const bool open = newest && newest->chunked && !newest->complete;
  plan.hold_verdict = open;
  const bool newer = usable && (!position || !position->snapshot_lsn || newest->lsn > *position->snapshot_lsn);
  plan.rebuild = !position || newer;
  if (newer) plan.snapshot_lsn = newest->lsn;
  if (!plan.rebuild) plan.after_lsn = position->applied_lsn;
  if (open && (!position || !position->snapshot_lsn || newest->lsn > *position->snapshot_lsn)) {
    plan.open_snapshot_lsn = newest->lsn;
    plan.open_snapshot_app_id = newest->app_id;
    const std::int64_t applied_wave =
        position && position->open_snapshot_lsn == newest->lsn ? position->snapshot_wave.value_or(-1) : -1;
    for (const auto& [chunk, wave] : newest->chunk_waves) {
      if (wave <= applied_wave) continue;
      plan.wave_chunks.push_back(chunk);
      if (auto stamp = newest->chunk_stamps.find(chunk); stamp != newest->chunk_stamps.end()) {
        plan.wave_stamps[chunk] = stamp->second;
      }
      plan.through_wave = std::max(plan.through_wave.value_or(wave), wave);
    }
    std::sort(plan.wave_chunks.begin(), plan.wave_chunks.end());
  }
  return plan;
}

SilverPosition PositionAfter(const SilverApplyPlan& plan, const std::optional<SilverPosition>& position,
                             const std::string& max_change_lsn) {
  SilverPosition moved = position.value_or(SilverPosition{});
  if (!max_change_lsn.empty() && (!moved.applied_lsn || max_change_lsn > *moved.applied_lsn)) {
    moved.applied_lsn = max_change_lsn;
  }
  if (plan.snapshot_lsn) {
    moved.snapshot_lsn = plan.snapshot_lsn;
    moved.open_snapshot_lsn.reset();
    moved.snapshot_wave.reset();
    if (!moved.applied_lsn || *plan.snapshot_lsn > *moved.applied_lsn) moved.applied_lsn = plan.snapshot_lsn;
  }
  if (plan.open_snapshot_lsn && plan.through_wave) {
    moved.open_snapshot_lsn = plan.open_snapshot_lsn;
    moved.snapshot_wave = static_cast<std::int32_t>(*plan.through_wave);
  }
  return moved;
}

bool PlanTakesRow(const SilverApplyPlan& plan, int operation, std::string_view snapshot_of_row,
                  std::optional<int> chunk) {
  if (operation != 0) return true;
  if (plan.snapshot_lsn) return snapshot_of_row == *plan.snapshot_lsn;
  if (plan.open_snapshot_lsn && chunk && snapshot_of_row == *plan.open_snapshot_lsn) {
    return std::binary_search(plan.wave_chunks.begin(), plan.wave_chunks.end(), *chunk);
  }
  return false;
}

std::optional<std::pair<std::string, std::string>> SilverRowsFilter(const SilverApplyPlan& plan,
                                                                    const std::string& oldest_wave_stamp) {
  if (plan.snapshot_lsn) return std::pair<std::string, std::string>{">=", *plan.snapshot_lsn};
  if (plan.rebuild) return std::nullopt;  // a first call: every change
  if (!oldest_wave_stamp.empty() && (!plan.after_lsn || oldest_wave_stamp <= *plan.after_lsn)) {
    return std::pair<std::string, std::string>{">=", oldest_wave_stamp};
  }
  if (plan.after_lsn) return std::pair<std::string, std::string>{">", *plan.after_lsn};
  return std::nullopt;
}

}  // namespace mssql_cdc
