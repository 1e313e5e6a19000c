// Chunked snapshots (docs/snapshots.md, "Chunked snapshot"): opened by a stream's
// bootstrap at S, then read by backfill calls in waves next to the running stream.
//
// OpenChunkedSnapshot records S (the max LSN), writes the key's extent to the plans table
// (its `snapshot_open` row, as 0.8.0 keeps it) and `snapshot_open` (mode chunked) to the facts
// table, and returns S, where the stream starts; it reads no row of the table. A rerun finds the open (or complete)
// snapshot in the facts rows and returns its S again; a snapshot in bronze the facts rows do
// not know is returned as found, for the caller to start from.
//
// RunBackfill, called again and again until its status is `done`:
//   1. plans every chunk on its first call (chunk_plan.h), writes the plan into the plans table
//      (plans_table.h) and then the `snapshot_plan` facts row with the plan's digest; a later
//      call reads the plan back and refuses one that no longer matches the digest;
//   2. rebuilds the `snapshot_chunk` rows of a wave that reached bronze but not the facts
//      (a crash between the two), from the bronze commit's userMetadata;
//   3. reads waves: stamp L = max LSN before each (L >= S), rounds of `partitions` chunks not
//      yet read, one bronze commit per wave tagged txn(<app_id>#snap.<S>, wave) whose rows are
//      operation 0 with _start_lsn = L, _snapshot = S and _chunk, then one `snapshot_chunk` row
//      per chunk tagged txn(<app_id>#snapchunks.<S>, wave);
//   4. after the last chunk, the completion row (`bootstrap`) with max_lsn = S, which closes
//      the snapshot.
// The plans table keeps 0.8.0's layout of one row per event: each wave is recorded there as
// 0.8.0 records one (chunk rows, and its wave userMetadata on the commit), so that either
// library takes up a snapshot the other began (plans_table.h). A table an earlier release made
// in the layout of one row per chunk goes on in it.
// Invariants P1-P5: no chunk older than its stamp (stamped before its read), stamps >= S, the
// stream reads every change after S, the chunks tile the key space, and key removals reach
// bronze as the stream's rows. A wave rerun after a crash writes nothing twice: Delta skips a
// txn it holds, and the facts rows carry theirs.
//
// The tables are written through BackfillTables: Delta tables at paths for the native engine,
// a Spark session's tables for Spark mode.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "core/offset.h"
#include "core/options.h"
#include "delta/actions.h"
#include "snapshot/chunk_plan.h"
#include "snapshot/chunked_state.h"
#include "engine/snapshot_request.h"
#include "snapshot/snapshot_finder.h"
#include "source/source.h"

namespace mssql_cdc {

class SourceClock;

// What one wave reads: its chunks (with bounds), stamped L, of snapshot S.
struct WaveRead {
  std::string capture_instance;
  std::vector<std::string> keys;
  std::vector<Chunk> chunks;
  Offset stamp;   // L
  Lsn snapshot;   // S
  std::int64_t wave = 0;
};

// What a wave's append wrote: rows (and read seconds, when measured) per chunk.
struct WaveWritten {
  std::map<int, std::int64_t> rows;
  std::map<int, double> seconds;
};

class BackfillTables {
 public:
  virtual ~BackfillTables() = default;
  // The facts table's snapshot events of bronze's target (every stream writing it).
  virtual std::vector<SnapshotEvent> SnapshotEvents() = 0;
  // The retention headroom of the stream's newest micro-batch facts row that has one, and
  // that row's age in hours; nullopt when none has one.
  virtual std::optional<std::pair<double, double>> NewestHeadroom(const std::string& app_id) = 0;
  // The plans table's columns (which tell its layout, plans_table.h); nullopt when it does not
  // exist yet.
  virtual std::optional<std::vector<std::string>> PlansColumns() = 0;
  // The plan of S among the plans table's rows of S (PlanFromTable); nullopt when none.
  virtual std::optional<ChunkPlan> ReadPlan(const std::string& app_id, const Lsn& snapshot) = 0;
  // Appends rows to the plans table, creating it in this engine's layout when it does not exist.
  // True when this write committed the rows; false when the plans table held the txn already
  // (another call planned first: the table's plan is the plan) or the writer cannot tell.
  virtual bool WritePlan(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) = 0;
  // Bronze's txn version of `txn_app_id`, and the userMetadata of the commit that set it (when
  // that commit is still in the log); version -1 when bronze holds none.
  virtual std::pair<std::int64_t, std::optional<std::string>> LastWave(const std::string& txn_app_id) = 0;
  // Rows per _chunk among bronze's rows of snapshot S: the fallback when a wave's commit left
  // the log.
  virtual std::map<int, std::int64_t> ChunkRows(const Lsn& snapshot) = 0;
  // Reads the wave's chunks and appends them in one bronze commit tagged `txn`, its
  // userMetadata given by `metadata` (with the rows per chunk when the writer knows them before
  // the commit; else with none, and the rows are counted after it). A txn bronze holds already
  // writes nothing and returns no rows.
  virtual WaveWritten AppendWave(const WaveRead& wave, const delta::Txn& txn,
                                 const std::function<std::string(const WaveWritten&)>& metadata) = 0;
  virtual void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) = 0;
  // The newest snapshot of the table bronze holds (of any of `instances`).
  virtual std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) = 0;
};


struct ChunkedOpenResult {
  Offset snapshot;           // S: where the stream starts
  bool opened_now = false;   // false: found open or complete in the facts rows
  // Bronze holds a snapshot of the table the facts rows do not know as this stream's (a seed,
  // a snapshot() call, another stream's): nothing was written; the caller starts from it as a
  // full bootstrap does (RunBootstrap finds it).
  std::optional<FoundSnapshot> found;
};

ChunkedOpenResult OpenChunkedSnapshot(const SnapshotSubject& subject, const SnapshotCause& cause,
                                      Source& source, const SourceClock& clock,
                                      BackfillTables& tables);

struct BackfillRequest {
  CaptureInstanceInfo instance;
  std::vector<CapturedColumn> columns;
  std::vector<std::string> key_columns;
  std::string app_id;
  std::string target;
  std::string plans_table;
  std::optional<std::int64_t> chunk_rows;       // planning only; default kDefaultChunkRows
  std::optional<std::int64_t> max_waves;        // per call
  std::optional<double> max_seconds;            // per call
  std::optional<double> target_wave_seconds;    // default 300
  std::optional<double> min_headroom_hours;
  int partitions = 1;                           // chunks read at once
  // Asked between waves: true ends the call (a native run stopping).
  std::function<bool()> stop;
};

// The [backfill] table of a pipeline file: what a native backfill may use.
struct NativeBackfillOptions {
  std::optional<std::int64_t> chunk_rows;    // planning; default kDefaultChunkRows
  std::optional<int> partitions;             // chunks read at once; default numPartitions
  std::optional<double> min_headroom_hours;  // pause below it; default never
  std::optional<double> target_wave_seconds; // default 300

  // From the [backfill] keys chunk_rows, partitions, min_headroom_hours, target_wave_seconds
  // (snake_case, any case); ConfigError naming an unknown key or a value out of range.
  static NativeBackfillOptions Parse(const Options& options);
};

// Checks the request's own values (ConfigError): chunk_rows >= 1, max_waves >= 1,
// max_seconds, target_wave_seconds and min_headroom_hours >= 0, partitions >= 1.
void ValidateBackfillRequest(const BackfillRequest& request);

struct BackfillStatus {
  std::optional<std::string> snapshot;  // S
  std::int64_t chunks_done = 0;
  std::optional<std::int64_t> chunks_total;
  std::int64_t rows = 0;
  bool done = false;
  bool paused = false;
  std::string state;  // done, running, waiting_headroom, waiting_metrics, no_snapshot
  std::string reason;
  std::string ToJson() const;
};

// `source` stamps, plans and reads; `more` lends what a plan's grid counts at once besides it.
BackfillStatus RunBackfill(const BackfillRequest& request, Source& source, SourcePool& more,
                           const SourceClock& clock, BackfillTables& tables);

// The txn app ids of a chunked snapshot's waves in bronze, its chunk rows and its opens in the
// facts table, and of its snapshot_open row in the plans table.
std::string WaveTxnAppId(const std::string& app_id, const Lsn& snapshot);
std::string ChunkFactsTxnAppId(const std::string& app_id, const Lsn& snapshot);
std::string OpensTxnAppId(const std::string& app_id);
std::string OpenTxnAppId(const std::string& app_id, const Lsn& snapshot);

}  // namespace mssql_cdc
