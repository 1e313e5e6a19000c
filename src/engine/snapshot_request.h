// What every way of taking a whole snapshot of a source table is told: which table, for which
// stream (SnapshotSubject), and why (SnapshotCause). The full bootstrap, the chunked
// snapshot's open and both modes' callers (the native stream, Spark mode's feed) build them in
// one place each, so that the two modes snapshot the same instance with the same keys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/facts_events.h"
#include "core/time.h"
#include "source/source.h"

namespace mssql_cdc {

struct SnapshotSubject {
  // The instance the snapshot reads through (SnapshotInstance: the newest that has taken
  // over, whose captured columns are the table's current ones).
  CaptureInstanceInfo instance;
  // The capture instances of the table (InstancesOfTable): a snapshot of any of them that
  // bronze holds is the table's.
  std::vector<std::string> instances;
  std::vector<CapturedColumn> columns;  // `instance`'s, for the key's types
  std::vector<std::string> key_columns;  // snapshotKeys; empty: the instance's index
  std::string app_id;  // the stream's: names the snapshot's txns and facts rows
  std::string target;  // bronze, as the facts rows name it
};

// The subject of a snapshot of `configured`'s table for stream `app_id` into `target`.
SnapshotSubject SnapshotSubjectFor(Source& source, const CaptureInstanceInfo& configured,
                                   const std::string& app_id, const std::string& target,
                                   const std::optional<std::vector<std::string>>& snapshot_keys);

// A stream's first snapshot ("bootstrap"), or a re-snapshot after data loss (generations.h):
// kind "resnapshot", the generation it starts and the interval lost. A re-snapshot never
// starts from a snapshot bronze holds already.
struct SnapshotCause {
  std::string kind{facts_event::kBootstrap};
  int generation = 0;
  std::optional<UtcMicros> lost_from_ts, lost_to_ts;

  bool is_resnapshot() const { return kind == facts_event::kResnapshot; }
};

}  // namespace mssql_cdc
