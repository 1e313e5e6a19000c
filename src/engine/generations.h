// Re-snapshot generations (docs/snapshots.md, on_data_loss="resnapshot"): a stream whose
// next changes CDC cleanup purged recovers by itself, once per resnapshot_interval_days, by
// snapshotting the table again and going on as generation n+1: its own checkpoint
// (<checkpoint>/_generations/<n+1>) and sink id (<app_id>.g<n+1>), starting at the new snapshot.
//
// The generation state file <checkpoint>/_mssql_cdc_generation.json is the commit point:
// {"generation", "snapshot_lsn", "commit_ts", "at"}, plus "recovering" (the last processed LSN)
// while a recovery is open and "failed_at" after one failed. Written atomically. No file:
// generation 0, never recovered.
#pragma once

#include <optional>
#include <string>

#include "core/offset.h"
#include "core/time.h"
#include "engine/retention_guard.h"

namespace mssql_cdc {

struct GenerationState {
  int generation = 0;
  std::optional<Offset> snapshot;      // where the generation started
  std::optional<UtcMicros> at;         // when it began (a re-snapshot)
  std::optional<Lsn> recovering;       // the last processed LSN of a recovery under way
  std::optional<UtcMicros> failed_at;  // the last recovery that failed

  // nullopt when `base` has no state file. ConfigError for a damaged one.
  static std::optional<GenerationState> Read(const std::string& base);
  void Write(const std::string& base) const;
};

// Generation n's checkpoint under `base` (n = 0: base itself) and its sink id (n = 0: app_id).
std::string GenerationCheckpoint(const std::string& base, int generation);
std::string GenerationAppId(const std::string& app_id, int generation);

// Changes after the last processed offset that cleanup purged while the source moved on.
struct LossFound {
  Offset last_processed;
  Retention retention;  // the min LSN the changes resume at, and its commit time
};

// The pre-flight: whether the changes after `last_processed` are gone (the max LSN is past it
// and the instance's min LSN is past the first LSN after it).
std::optional<LossFound> FindLoss(Source& source, const SourceClock& clock,
                                  const std::string& capture_instance, const Offset& last_processed);

// The interval rule: at most one automatic re-snapshot (or failed attempt) per
// `interval_days`. Throws DataLossError naming the loss, the last attempt and what to do when
// one is that recent.
void CheckResnapshotInterval(const GenerationState& state, UtcMicros now, double interval_days,
                             const std::string& capture_instance, const LossFound& loss);

}  // namespace mssql_cdc
