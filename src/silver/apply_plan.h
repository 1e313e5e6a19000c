// What one apply_changes call applies, decided the same way in both modes from silver's
// position and the newest snapshot bronze holds: a rebuild from that snapshot when silver has
// not been rebuilt from it (or has no position yet), else the changes past its position. A
// chunked snapshot counts once the facts show it complete; while open it holds the verdict.
#pragma once

#include <optional>
#include <string>

#include <vector>

#include "engine/finalization.h"
#include "snapshot/chunked_state.h"

namespace mssql_cdc {

struct BronzeSnapshot {
  std::string lsn;       // its LSN: coalesce(_snapshot, _start_lsn) of its rows
  bool chunked = false;
  bool complete = true;  // a chunked one: closed by a bootstrap or resnapshot facts row
};

struct SilverApplyPlan {
  bool rebuild = false;
  // Rebuild from a snapshot: rows at or after its LSN; its own operation-0 rows and every
  // change. Without one: every change.
  std::optional<std::string> snapshot_lsn;
  // Incremental: changes after this LSN (none: every change).
  std::optional<std::string> after_lsn;
  bool hold_verdict = false;  // an open chunked snapshot
};

// Whether the facts rows `events` (of bronze's stream) close the snapshot at `lsn`: a
// bootstrap or resnapshot row at or past it.
bool SnapshotClosed(const std::vector<SnapshotEvent>& events, const std::string& lsn);

SilverApplyPlan PlanSilverApply(const std::optional<SilverPosition>& position,
                                const std::optional<BronzeSnapshot>& newest);

// Silver's position once the plan's rows, the newest of which is `max_lsn_read` (empty: none),
// were applied.
SilverPosition PositionAfter(const SilverApplyPlan& plan, const std::optional<SilverPosition>& position,
                             const std::string& max_lsn_read);

// Whether a bronze row is one the plan applies: `operation`, its _start_lsn, and its
// coalesce(_snapshot, _start_lsn) for snapshot rows. The LSN bounds are applied by the read's
// filter (SilverRowsFilter); this is the rest.
bool PlanTakesRow(const SilverApplyPlan& plan, int operation, std::string_view snapshot_of_row);

// The read's filter on _start_lsn, as (operator, LSN); nullopt: every row.
std::optional<std::pair<std::string, std::string>> SilverRowsFilter(const SilverApplyPlan& plan);

}  // namespace mssql_cdc
