// Many streams in one process: the seed's start_many, await_all and stop_all.
//
// target, app_id and checkpoint are templates that must contain {ci}. Per-table options
// override the shared ones, matched ignoring case. Every table's input is checked, and every
// capture instance resolved, before anything is written (invariant 9 of docs/invariants.md); a table whose
// checkpoint another run owns is refused alone (invariant 8 of docs/invariants.md). The facts and control tables
// are created once before the first stream starts. Streams are set up one after another; a
// start that fails stops those already started and throws its error. Once running, a failing
// stream stops alone while the others go on.
//
// The streams share what limits.* bounds (engine_limits.h): their batches run as turns on
// limits.workers threads (turn_scheduler.h), their Sources come from one pool per database of
// limits.connections, and their facts rows and verdicts are written a few commits at a time
// (GroupedAppender, VerdictWriter), so a process holds a thousand streams with a few threads
// and connections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/source_options.h"
#include "core/stream_params.h"
#include "engine/engine_limits.h"
#include "engine/stream.h"
#include "fleet/silver_keeper.h"
#include "fleet/turn_scheduler.h"

namespace mssql_cdc {

struct TableSpec {
  std::string capture_instance;
  Options options;  // overrides of the shared options for this table
};

struct ManyConfig {
  Options shared_options;             // source options shared by every table
  std::vector<TableSpec> tables;      // in start order
  std::string target;                 // templates with {ci}
  std::string app_id;
  std::string checkpoint;
  Options stream_params;              // facts_table, trigger, bootstrap, on_data_loss, ... (as StreamParams)
  std::optional<std::string> control_table;  // track every table's verdict here when set
  Granularity granularity = Granularity::kHour;
  EngineLimits limits;  // memory, connections, threads and streams of the whole group
  NativeBackfillOptions backfill;  // each chunked snapshot's in-process backfill
  std::optional<SilverConfig> silver;  // a silver table per stream, kept after each bronze commit
};

// The validated configuration of one table's stream: the shared options with the table's,
// the templates expanded. Throws ConfigError naming what is wrong.
StreamConfig TableStreamConfig(const ManyConfig& config, const TableSpec& table);

// The silver table of one table's stream (config.silver set): bronze, silver, control and
// facts tables and the keys of [silver.keys] (empty: the unique index's, known at Prepare).
ApplyChangesOptions TableSilverOptions(const ManyConfig& config, const StreamConfig& stream);

using SourceFactoryFor = std::function<SourceFactory(const SourceOptions&)>;

class StreamGroup {
 public:
  // Checks the whole group's input and writes nothing: templates and options of every table,
  // that no two of the tables and checkpoints are one location, and every stream's Prepare
  // (its capture instance resolved, its checkpoint locked and checked when it exists, its
  // startingLsn, its existing tables). Throws the first error, naming the table. A table
  // whose checkpoint another run holds is no error here: it is set aside (refused()), ended
  // with its CheckpointInUseError, and the others go on.
  static std::unique_ptr<StreamGroup> Prepare(const ManyConfig& config,
                                              SourceFactoryFor factory = MakeSourceFactory);
  // Creates the facts and control tables, then starts the prepared streams in order, each
  // once the one before it has started its source. A start that fails stops those already
  // started and throws its error, naming the table; one refused by a checkpoint another run
  // took meanwhile is set aside as at Prepare.
  void Start();
  // Prepare, then Start.
  static std::unique_ptr<StreamGroup> StartMany(const ManyConfig& config,
                                                SourceFactoryFor factory = MakeSourceFactory);
  ~StreamGroup();  // stops every stream

  // Waits for every stream (or until the timeout) and returns the error of each one that
  // failed, by capture instance; throws nothing. With a timeout, streams still running are
  // not in the result.
  std::map<std::string, std::exception_ptr> AwaitAll(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Stops every stream after its current batch and waits for them.
  void StopAll();

  const std::map<std::string, std::unique_ptr<Stream>>& streams() const { return streams_; }
  // A count that moves whenever a stream's progress or state changes: a reporter scans the
  // streams again only when it moved.
  std::uint64_t changes() const { return changes_->load(std::memory_order_relaxed); }
  // What the group holds now: scheduler threads, and Sources open (each holds at most one
  // connection to the source) over all its pools.
  int worker_threads() const;
  int open_sources() const;
  int most_open_sources() const;
  // Capture instances in start order, the refused ones included.
  const std::vector<std::string>& order() const { return order_; }
  // Capture instances whose checkpoint another run held at Prepare or took before Start.
  const std::vector<std::string>& refused() const { return refused_; }

 private:
  StreamGroup() = default;
  // Declared before the scheduler, so that the scheduler (whose turns use the streams) goes
  // first when the group is destroyed.
  std::map<std::string, std::unique_ptr<Stream>> streams_;
  std::vector<std::string> order_;
  std::vector<std::string> refused_;
  std::optional<std::string> facts_table_, control_table_;
  Granularity granularity_ = Granularity::kHour;
  EngineLimits limits_;
  // One per database (source identity), shared by its streams; facts and verdicts filled at
  // Start, before any stream is set up.
  std::map<std::string, std::shared_ptr<StreamServices>> services_;
  std::shared_ptr<std::atomic<std::uint64_t>> changes_ = std::make_shared<std::atomic<std::uint64_t>>(0);
  std::unique_ptr<TurnScheduler> scheduler_;
  bool started_ = false;
};

// "{ci}" replaced by the capture instance; ConfigError naming the parameter when absent.
std::string ExpandTemplate(const std::string& pattern, const std::string& parameter,
                           const std::string& capture_instance);

}  // namespace mssql_cdc
