// What a stream is given (StreamConfig, with the StreamServices a group shares) and what it
// reports (StreamProgress): the types stream.h and the parts of a stream's batch
// (stream_batch.h) both use, apart from the Stream that runs them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/offset.h"
#include "core/source_options.h"
#include "core/stream_params.h"
#include "engine/backfill.h"
#include "engine/engine_limits.h"
#include "engine/finalization.h"
#include "source/max_lsn_cache.h"
#include "source/source_pool.h"

namespace mssql_cdc {

class VerdictWriter;
class SharedTableChecks;
namespace delta {
class GroupedAppender;
}

// What the streams of one process share: the Sources lent to them, the facts table and the
// control table they write a few commits at a time. StreamGroup makes them for its streams
// (facts and verdicts before the streams start); a stream given none makes its own.
struct StreamServices {
  std::shared_ptr<SourcePool> sources;
  std::shared_ptr<MaxLsnCache> max_lsn;               // the polls of a group's streams
  std::shared_ptr<delta::GroupedAppender> facts;      // when params.facts_table is set
  std::shared_ptr<VerdictWriter> verdicts;            // when control_table is set
  std::shared_ptr<SharedTableChecks> table_checks;    // the facts and control tables, once
  // Counts changes of the streams' progress and state (started, a batch, ended), so that a
  // reporter of a thousand streams looks at them only when one changed.
  std::shared_ptr<std::atomic<std::uint64_t>> changes;
};

// The steps of a batch after which a crash leaves a distinct state on disk.
enum class BatchStep { kOffsetsWritten, kBronzeAppended, kFactsAppended, kCommitted };
// "offsets_written", "bronze_appended", "facts_appended", "committed": the phase log's words.
std::string_view BatchStepName(BatchStep step);

struct StreamConfig {
  SourceOptions source;    // captureInstance, backend, simPath, maxCommitsPerBatch, ...
  StreamParams params;     // target, app_id, checkpoint, facts_table, trigger, bootstrap, ...
  // When set, the stream advances this control table's verdict of `tracked_table` (default:
  // the target) after every committed batch (finalization.track).
  std::optional<std::string> control_table;
  std::optional<std::string> tracked_table;
  // Called on the stream's thread each time bronze took rows and they are committed (a batch,
  // after its verdict moved; a bootstrap; a re-snapshot): what keeps a silver table in step
  // (fleet/silver_keeper.h). It is told the capture instances of the table the stream has seen
  // and the key columns of its instance's unique index. An exception ends the stream as a
  // failed batch does; bronze and the checkpoint are committed by then.
  struct BronzeCommitted {
    std::vector<std::string> table_instances;
    std::vector<std::string> index_columns;
  };
  std::function<void(const BronzeCommitted&)> after_bronze;
  std::optional<std::string> silver_table;  // the table after_bronze keeps, for messages and checks
  Granularity granularity = Granularity::kHour;
  // What the stream may use (engine_limits.h). `concurrent_ranges` is how many ranges share
  // limits.memory_budget: a group sets it for all its streams; 0 means this stream's own
  // numPartitions.
  EngineLimits limits;
  int concurrent_ranges = 0;
  // A chunked snapshot (params.snapshot chunked, with bootstrap) is read by a backfill in the
  // stream's process, next to it, with these limits (backfill_runner.h).
  NativeBackfillOptions backfill;
  std::shared_ptr<StreamServices> services;
  // Tests only: called after each step of each batch; a hook that throws ends the stream
  // right there, as a crash would, so tests can restart from every intermediate state.
  std::function<void(BatchStep step, std::int64_t batch_id)> step_hook;
};

// What the last committed batch did, for progress lines and the caller's verdict.
struct StreamProgress {
  std::int64_t batches = 0;        // batches committed by this run
  std::int64_t last_batch_id = -1;
  std::int64_t last_rows = 0;
  std::int64_t total_rows = 0;     // change rows this run wrote
  std::optional<Offset> end;       // end offset of the last committed batch (this run or before)
  std::optional<double> capture_lag_seconds;
  std::optional<double> ingestion_lag_seconds;
  std::optional<double> retention_headroom_hours;  // of the last batch (facts row)
  // Whether CDC cleanup had purged changes of the capture instance at the last batch: until it
  // has, the headroom is only the instance's age (CleanupHasPurged).
  std::optional<bool> cleanup_purged_yet;
  std::optional<double> last_batch_seconds;        // how long the last batch took
  bool caught_up = false;          // availableNow: reached its target
  std::optional<BackfillStatus> backfill;  // the in-process backfill's last status
};

}  // namespace mssql_cdc
