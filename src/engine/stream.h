// A stream: one capture instance copied into one bronze Delta table, exactly once.
//
// Each micro-batch reads (start, end] (plan/planner.h), in up to numPartitions commit-aligned
// ranges read in parallel with a Source each, and then, in this order:
//   1. writes the batch's offsets to the checkpoint (<checkpoint>/offsets/<batch_id>.json),
//   2. appends its rows to bronze tagged txn(app_id, batch_id) (nothing when no rows),
//   3. appends its facts row tagged txn(<app_id>#facts, batch_id) when a facts table is set,
//   4. marks it done (<checkpoint>/commits/<batch_id>.json),
//   5. advances the verdict when the stream tracks one (finalization.h).
// A stream killed anywhere restarts from the checkpoint: a batch with offsets but no commit
// marker is read again with the same range, and the txn tags make its replayed appends write
// nothing. Bronze ends equal to the change table, row for row.
//
// Bootstrap takes a full snapshot at the max LSN recorded before the read (operation 0 rows,
// _snapshot set), writes a `bootstrap` facts row and starts the stream there; a later run
// finds the snapshot in the checkpoint and does not take it again. When cleanup purged part
// of the next range the batch fails with DataLossError and writes nothing, or, with
// failOnDataLoss=false, records a `data_skipped` facts row and goes on from the min LSN.
//
// One stream per checkpoint at a time (invariant 8 of docs/invariants.md): a running stream holds its checkpoint's
// lock (checkpoint_lock.h), and before each append checks that bronze agrees with the
// checkpoint (batch_agreement.h).
//
// Start/Stop/Await may be called from any thread; the batches run on the stream's own thread,
// or, for the streams of a StreamGroup, on its scheduler's threads (StartTurns, Turn).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/offset.h"
#include "core/options.h"
#include "engine/stream_config.h"
#include "source/max_lsn_cache.h"
#include "source/open_source.h"
#include "source/source_pool.h"
#include "source/source.h"

namespace mssql_cdc {

class Stream {
 public:
  // Validates the configuration (ConfigError) without touching the source or any table.
  Stream(StreamConfig config, SourceFactory source_factory);
  ~Stream();  // stops and joins
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Checks everything the stream reads before it writes anything, and writes nothing:
  // resolves the capture instance and the source clock, takes the checkpoint's lock and checks
  // its files when the checkpoint exists, checks startingLsn for a new checkpoint, opens the
  // tables that exist. Throws the input's errors (CheckpointInUseError when another run holds
  // the checkpoint), which also end the stream as error() reports. Start runs it when it has
  // not run; StreamGroup runs it for every table before any table writes.
  void Prepare();
  // Prepares when not yet done, takes the lock of a new checkpoint and records this process as
  // its owner, creates bronze when missing, runs the bootstrap when asked and not yet done,
  // recovers the checkpoint, then starts the batch thread. Returns once the stream has started
  // its source (the first planning ran). Throws the errors of what runs before the batch
  // thread; a failure of the first planning (data loss) ends the stream and is reported by
  // Await and error(). The checkpoint stays locked until the stream object is destroyed.
  void Start();
  // Start without a thread of the stream's own, for a scheduler that runs the turns of many
  // streams on its threads (StreamGroup): everything Start does before the first batch. Then
  // call Turn when it is due. `wake` is called when the stream wants its next turn at once
  // (Stop was asked).
  void StartTurns(std::function<void()> wake);
  // One turn: plans the next batch and runs it, or finds nothing new, holding one lent Source
  // throughout. Returns when the next turn is due (now, for a stream with more to read); nullopt
  // once the stream has ended, as Await then reports.
  std::optional<std::chrono::steady_clock::time_point> Turn();
  // Whether the first turn has planned (or the stream ended).
  bool planned() const;

  // Asks the stream to stop after its current batch.
  void Stop();
  // Waits until the stream ends (availableNow caught up, stopped, or failed) or the timeout
  // passes; true when it ended.
  bool Await(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  bool active() const;
  // The error that ended the stream, or null.
  std::exception_ptr error() const;
  StreamProgress progress() const;
  const StreamConfig& config() const { return config_; }
  const std::string& capture_instance() const;
  // The captured columns Prepare read; empty before it.
  const std::vector<CapturedColumn>& captured_columns() const;
  // The key columns of the capture instance's unique index (empty without one, or before
  // Prepare).
  const std::vector<std::string>& index_columns() const;

  // Runs the whole stream on the calling thread: Start, then batches until the trigger's
  // end (availableNow) or Stop from another thread. Throws the stream's error.
  StreamProgress Run();

 private:
  class Impl;
  StreamConfig config_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mssql_cdc
