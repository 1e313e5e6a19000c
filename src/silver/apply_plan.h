// What one apply_changes call applies, decided the same way in both modes from silver's
// position and the newest snapshot bronze holds: a rebuild from that snapshot when silver has
// not been rebuilt from it (or has no position yet), else the changes past its position. A
// chunked snapshot counts once the facts show it complete; while open it holds the verdict.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <vector>

#include "engine/finalization.h"
#include "snapshot/chunked_state.h"

namespace mssql_cdc {

struct BronzeSnapshot {
  std::string lsn;       // its LSN: coalesce(_snapshot, _start_lsn) of its rows
  bool chunked = false;
  bool complete = true;  // a chunked one: closed by a bootstrap or resnapshot facts row
  // A chunked one: its chunks read so far (with facts rows), each with its wave, and the
  // stream (or generation) that opened it, whose plan in the plans table bounds its chunks.
  std::vector<std::pair<int, std::int64_t>> chunk_waves;
  std::map<int, std::string> chunk_stamps;  // each chunk's stamp (facts min_lsn)
  std::string app_id;
};

struct SilverApplyPlan {
  bool rebuild = false;
  // Rebuild from a snapshot: rows at or after its LSN; its own operation-0 rows and every
  // change. Without one: every change.
  std::optional<std::string> snapshot_lsn;
  // Incremental: changes after this LSN (none: every change).
  std::optional<std::string> after_lsn;
  bool hold_verdict = false;  // an open chunked snapshot
  // An open chunked snapshot applied wave by wave: its LSN, the chunks of the waves after the
  // one silver applied last, and the newest of those waves. Their rows are ranked with every
  // change from the oldest stamp among them on, so that a change after a chunk was read
  // outranks the chunk's row even when silver applied that change before.
  std::optional<std::string> open_snapshot_lsn;
  std::vector<int> wave_chunks;
  std::optional<std::int64_t> through_wave;
  // For the waves' range deletes (silver/wave_ranges.h): the stream whose plan bounds the
  // chunks, and each wave chunk's stamp.
  std::string open_snapshot_app_id;
  std::map<int, std::string> wave_stamps;
};

// What the facts rows `events` of bronze's stream say of its chunked snapshot at `lsn`:
// complete once a bootstrap or resnapshot row closes it, and the chunks read so far.
BronzeSnapshot ChunkedSnapshotOf(const std::vector<SnapshotEvent>& events, const std::string& lsn);

// Rows of a chunked snapshot are applied only with the stream's facts table: ConfigError naming
// bronze without it.
void RequireFactsForChunked(bool has_facts, const std::string& bronze_name);

SilverApplyPlan PlanSilverApply(const std::optional<SilverPosition>& position,
                                const std::optional<BronzeSnapshot>& newest);

// Silver's position once the plan's rows were applied, the newest change among them at
// `max_change_lsn` (snapshot rows do not count: a chunk's stamp may be ahead of the changes
// bronze holds; empty: none).
SilverPosition PositionAfter(const SilverApplyPlan& plan, const std::optional<SilverPosition>& position,
                             const std::string& max_change_lsn);

// Whether a bronze row within the read's bounds is one the plan applies: every change, and the
// snapshot rows of the snapshot rebuilt from or of the waves applied. `snapshot_of_row` is its
// coalesce(_snapshot, _start_lsn), `chunk` its _chunk.
bool PlanTakesRow(const SilverApplyPlan& plan, int operation, std::string_view snapshot_of_row,
                  std::optional<int> chunk);

// The read's bound on _start_lsn, as (operator, LSN); nullopt: every row. `oldest_wave_stamp`
// is the oldest _start_lsn of the waves' rows the plan applies (empty: none).
std::optional<std::pair<std::string, std::string>> SilverRowsFilter(const SilverApplyPlan& plan,
                                                                    const std::string& oldest_wave_stamp = "");

}  // namespace mssql_cdc
