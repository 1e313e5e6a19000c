#include "silver/apply_plan.h"

namespace mssql_cdc {

bool SnapshotClosed(const std::vector<SnapshotEvent>& events, const std::string& lsn) {
  for (const auto& event : events) {
    if ((event.event == "bootstrap" || event.event == "resnapshot") && event.max_lsn && *event.max_lsn >= lsn) {
      return true;
    }
  }
  return false;
}

SilverApplyPlan PlanSilverApply(const std::optional<SilverPosition>& position,
                                const std::optional<BronzeSnapshot>& newest) {
  SilverApplyPlan plan;
  const bool usable = newest && (!newest->chunked || newest->complete);
  plan.hold_verdict = newest && newest->chunked && !newest->complete;
  const bool newer = usable && (!position || !position->snapshot_lsn || newest->lsn > *position->snapshot_lsn);
  plan.rebuild = !position || newer;
  if (newer) plan.snapshot_lsn = newest->lsn;
  if (!plan.rebuild) plan.after_lsn = position->applied_lsn;
  return plan;
}

SilverPosition PositionAfter(const SilverApplyPlan& plan, const std::optional<SilverPosition>& position,
                             const std::string& max_lsn_read) {
  SilverPosition moved = position.value_or(SilverPosition{});
  if (!max_lsn_read.empty() && (!moved.applied_lsn || max_lsn_read > *moved.applied_lsn)) {
    moved.applied_lsn = max_lsn_read;
  }
  if (plan.snapshot_lsn) moved.snapshot_lsn = plan.snapshot_lsn;
  if (plan.rebuild && !moved.applied_lsn) moved.applied_lsn = plan.snapshot_lsn;
  return moved;
}

bool PlanTakesRow(const SilverApplyPlan& plan, int operation, std::string_view snapshot_of_row) {
  if (operation != 0) return true;
  // Snapshot rows count only in a rebuild from their own snapshot.
  return plan.snapshot_lsn && snapshot_of_row == *plan.snapshot_lsn;
}

std::optional<std::pair<std::string, std::string>> SilverRowsFilter(const SilverApplyPlan& plan) {
  if (plan.snapshot_lsn) return std::pair<std::string, std::string>{">=", *plan.snapshot_lsn};
  if (plan.after_lsn) return std::pair<std::string, std::string>{">", *plan.after_lsn};
  return std::nullopt;
}

}  // namespace mssql_cdc
