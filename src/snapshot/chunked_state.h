// Where a stream's snapshots stand, read from its facts rows (docs/reference/tables.md, docs/snapshots.md):
// which snapshot is open in which mode, how far a chunked one has come, and what its next
// wave reads. The facts table is the record: snapshot_open opens a snapshot at S, a
// `bootstrap` (or `resnapshot`) row of the same stream whose max_lsn is S or later closes it,
// snapshot_plan says it is planned and snapshot_chunk rows say which chunks bronze holds. The
// rows hold no key values: those live in the plans table next to bronze (plans_table.h).
//
// One mode per run: an open snapshot of one mode refuses the start of the other (ModeLock).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/stream_params.h"
#include "core/time.h"

namespace mssql_cdc {

// A facts row that is a snapshot event of one stream (event not NULL).
struct SnapshotEvent {
  std::string event;
  std::string app_id;
  std::optional<std::string> min_lsn, max_lsn;
  std::optional<std::int64_t> rows;
  std::optional<std::int64_t> duration_ms;
  std::optional<std::string> detail;  // JSON text
  std::optional<UtcMicros> started_at, written_at;
};

struct OpenedSnapshot {
  bool chunked = false;
  Lsn snapshot;         // S
  std::string kind;     // bootstrap or resnapshot
  int generation = 0;
  std::string app_id;   // the generation's
  bool complete = false;
  std::optional<UtcMicros> lost_from_ts, lost_to_ts;  // a re-snapshot's lost interval
  std::optional<std::int64_t> rows_estimate;  // the table's rows when opened (chunked)
};

struct ChunkRecord {
  int chunk = 0;
  std::int64_t wave = 0;
  std::int64_t rows = 0;
  bool last = false;
  std::optional<std::int64_t> wave_ms;  // how long its wave took
  std::optional<UtcMicros> started_at, written_at;  // its wave's
  std::string stamp;  // the LSN its rows are stamped with (taken before they were read)
};

// What the facts rows say of one chunked snapshot.
struct ChunkedProgress {
  OpenedSnapshot opened;
  bool planned = false;
  int chunks_total = 0;
  std::string plan_digest;  // the snapshot_plan row's; empty in mssql-cdc-pyspark 0.8.0's
  std::vector<ChunkRecord> chunks;  // one per chunk read, in wave order
  std::set<int> done() const;
  std::int64_t rows() const;
  // The last wave with facts rows; -1 for none.
  std::int64_t last_wave() const;
  // Seconds per round of `partitions` chunks at the pace of the last wave; nullopt without one.
  std::optional<double> seconds_per_round(int partitions) const;
  // Rows per second from the first wave's start to the last wave's facts, and the seconds the
  // chunks not yet read would take at that pace; nullopt before a wave.
  struct Pace {
    double rows_per_second = 0;
    std::optional<double> seconds_left;
  };
  std::optional<Pace> pace() const;
};

// Every snapshot opened for stream `app_id` (its generations included: app_id.g<n>), oldest
// first, each marked complete when a closing row exists.
std::vector<OpenedSnapshot> SnapshotsOpened(const std::vector<SnapshotEvent>& events,
                                            const std::string& app_id);

// The newest chunked snapshot of the stream, open or complete; nullopt when none was opened.
std::optional<ChunkedProgress> NewestChunked(const std::vector<SnapshotEvent>& events,
                                             const std::string& app_id);

// The open snapshot of the stream in `mode`, if any. A full one stops counting once CDC
// cleanup passed its S (`min_lsn`, when known), as it can never complete.
std::optional<OpenedSnapshot> OpenSnapshotIn(const std::vector<SnapshotEvent>& events,
                                             const std::string& app_id, SnapshotMode mode,
                                             const std::optional<Lsn>& min_lsn = std::nullopt);

// The lock between modes: throws ConfigError when the stream has an open snapshot of
// another mode than `starting` (`what` names the call for the message: "to_delta(...)").
void CheckModeLock(const std::vector<SnapshotEvent>& events, const std::string& app_id,
                   SnapshotMode starting, const std::string& what,
                   const std::optional<Lsn>& min_lsn = std::nullopt);

// The chunks a wave reads: the first `count` of those not done, in index order.
std::vector<int> NextWaveChunks(int chunks_total, const std::set<int>& done, int count);

// Rounds of `partitions` chunks in the next wave: as many as `target_seconds` holds at the
// pace known (one without a pace, or when target_seconds is 0), capped by what is left of the
// call's time budget, at least one.
int RoundsForWave(std::optional<double> seconds_per_round, double target_seconds,
                  std::optional<double> seconds_left);

}  // namespace mssql_cdc
