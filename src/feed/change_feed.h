// Spark mode's driver side (decision 0004): the decisions the native Stream makes before a
// micro-batch reads, for a caller that drives the batches and keeps the checkpoint itself.
//
// A ChangeFeed is one capture instance of one source. It starts where a native stream starts
// (stream_start.h), ends each batch where the native planner would (BatchPlanner::PlanEnd),
// checks retention before a batch as the native stream does (retention_guard.h), and splits a
// batch into the same commit-aligned ranges (BatchPlanner::Split). It reads no change rows:
// the ranges are read on Spark's executors (feed_range.h). It can also run the native
// bootstrap, with its crash-safe snapshot state kept in a directory of the caller's.
//
// A ChangeFeed holds one Source and is used from one thread at a time.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/offset.h"
#include "core/source_options.h"
#include "core/stream_params.h"
#include "core/timezone.h"
#include "engine/batch_measures.h"
#include "engine/generations.h"
#include "engine/retention_guard.h"
#include "engine/snapshot_request.h"
#include "plan/planner.h"
#include "schema_change/batch_schema.h"
#include "source/open_source.h"

namespace mssql_cdc {

class BootstrapTables;
class BackfillTables;
struct BackfillRequest;
struct BackfillStatus;

// Changes after a position that CDC cleanup has purged.
struct PurgedRange {
  Lsn first_lost;       // the first LSN after the position
  Retention retention;  // the min LSN, where reading can resume, and its commit time
};

struct FeedBootstrapRequest {
  std::string target;      // the bronze table (path or file:// URI)
  std::string app_id;      // the stream's app id: names the snapshot's txn and facts row
  std::string state_dir;   // where the snapshot state is kept (a native checkpoint's layout)
  std::optional<std::string> facts_table;  // gets the `bootstrap` event row when given
  SnapshotCause cause;  // a stream's first snapshot, or a re-snapshot after data loss
};

class ChangeFeed {
 public:
  // Throws ConfigError when captureInstance is missing, then opens the source through `factory` (MakeSourceFactory(options)
  // when null), resolves the capture instance (NotFoundError) and the source clock, and
  // builds the output schema (UnsupportedTypeError, ConfigError for a reserved name).
  // The feed reads with the union of the columns of its table's capture instances
  // (schema_change/table_columns.h), or with `query_schema` when given: the output schema a
  // running query was told, which a feed opened later must keep.
  explicit ChangeFeed(SourceOptions options, SourceFactory factory = nullptr,
                      std::shared_ptr<arrow::Schema> query_schema = nullptr);

  // The refusals of the constructor, for callers that read with these options elsewhere.
  static void CheckOptions(const SourceOptions& options);

  const SourceOptions& options() const { return options_; }
  const CaptureInstanceInfo& instance() const { return instance_; }
  // The capture instances of the instance's table, the instance first (its snapshot in
  // bronze may be any of theirs).
  std::vector<std::string> TableInstances();
  const std::shared_ptr<arrow::Schema>& output_schema() const { return output_schema_; }

  // The position before the first change to read, by startingLsn (InitialOffset).
  Offset InitialOffset();

  // The max LSN and its commit time; nullopt while lsn_time_mapping is empty.
  std::optional<Offset> MaxOffset();

  // The end of the batch after `start`: up to `target` (the max LSN when nullopt), at most
  // `max_commits` commits when given, and never past the commits before an enable the
  // capture process has not reached; `start` itself when nothing follows it. When a batch
  // follows, retention is checked first: a purged start throws DataLossError (writing
  // nothing) with failOnDataLoss, and is otherwise left for Purged() to report. Then the
  // batch's schema changes (schema_change/batch_schema.h): with schemaChangePolicy=fail any
  // DDL, and a type change the query's types cannot hold, throw SchemaChangedError; a newer
  // capture instance with columns the query cannot hold ends the batch before its start, and
  // the batch at its start throws SchemaChangedError ("The stream reaches capture instance").
  Offset LatestOffset(const Offset& start, std::optional<std::int64_t> max_commits,
                      std::optional<Lsn> target);

  // The changes after `start` that cleanup has purged; nullopt when none were. For the start
  // of the batch just planned, the answer its planning read.
  std::optional<PurgedRange> Purged(const Offset& start);
  // The re-snapshot pre-flight's question (generations.h): purged changes after the last
  // processed offset while the source moved past it.
  std::optional<LossFound> FindLoss(const Offset& last_processed);

  // The commit-aligned ranges (start, end] is read in, each of the capture instance serving
  // it (a newer one from its start), at most numPartitions (or the hardware threads) per
  // instance; none when end <= start or the split finds no rows. A purged start throws
  // DataLossError with failOnDataLoss, and otherwise reading starts at the min LSN.
  //
  // Partitions, Purged and SchemaEvents of the batch LatestOffset just planned answer from
  // what its planning read (the table's instances, the retention, the DDL history); for
  // another batch (a replay in a new driver) the first of them reads those once for the rest.
  std::vector<LsnRange> Partitions(const Offset& start, const Offset& end);

  // The facts events of the batch (start, end]: its DDL and the newer instances it starts
  // reading, with their commit times; warnings are logged.
  std::vector<SchemaEvent> SchemaEvents(const Offset& start, const Offset& end);

  // The measures of a batch (start, end] that Partitions splits into no range: nothing read,
  // and the batch's end measured now (batch_measures.h), as its facts row reports them.
  RangeMeasures MeasureEmptyRead(const Offset& start, const Offset& end);

  // The native bootstrap (engine/bootstrap.h) into `request.target`, creating bronze (and the
  // facts table) when missing; a run that died mid-snapshot is retaken at the same LSN, and
  // a finished one is not taken again. Returns the offset the stream starts after. ConfigError
  // when startingLsn is given too, as for a native stream.
  Offset Bootstrap(const FeedBootstrapRequest& request);
  // The same bootstrap into tables the caller writes (Spark mode's named tables, which it
  // creates itself); `request.target` then only names bronze in the facts row.
  Offset Bootstrap(const FeedBootstrapRequest& request, BootstrapTables& tables);

  // Opens the instance's chunked snapshot for stream request.app_id, or finds it open or
  // complete (engine/backfill.h): the offset the stream starts after. nullopt when bronze holds
  // a snapshot of the table the facts rows do not know: Bootstrap then starts from it.
  std::optional<Offset> OpenChunked(const FeedBootstrapRequest& request, BackfillTables& tables);
  // One backfill call (engine/backfill.h); the instance, its columns, snapshotKeys and
  // numPartitions come from the feed.
  BackfillStatus Backfill(BackfillRequest request, BackfillTables& tables);

 private:
  // What the source said of one batch (start, end] when it was planned: Spark asks for the
  // batch's end, ranges, purged changes and schema events in separate calls, each of which
  // would otherwise list the table's instances, read the retention or the DDL history again.
  struct PlannedBatch {
    Lsn start;
    Lsn end;
    mssql_cdc::TableInstances instances;
    std::string serving;   // the instance serving start + 1
    Retention retention;   // its retention
    std::optional<PurgedRange> purged;
    std::optional<BatchSchema> schema;  // read when first needed
  };

  // The table's capture instances now.
  mssql_cdc::TableInstances ListInstances();
  // The batch (start, end] with `instances`: the serving instance's retention read, and what
  // it purged after `start`.
  PlannedBatch PlanRetention(const Offset& start, const Offset& end,
                             mssql_cdc::TableInstances instances);
  // The batch (start, end] as planned, read from the source unless it is the one kept.
  PlannedBatch& Planned(const Offset& start, const Offset& end);
  const BatchSchema& PlannedSchema(PlannedBatch& batch);
  BatchSchemaRules SchemaRules() const;
  // The rules a stream's bootstrap in `mode` would check (ValidateStreamConfig).
  void CheckBootstrap(const FeedBootstrapRequest& request, SnapshotMode mode) const;

  SourceOptions options_;
  SourceFactory factory_;
  std::unique_ptr<Source> source_;
  CaptureInstanceInfo instance_;
  SourceClock clock_;
  StreamColumns columns_;  // the table's columns when the feed opened, or the `columns` option's
  std::shared_ptr<arrow::Schema> output_schema_;
  std::optional<PlannedBatch> planned_;  // the last batch planned
};

// Where a native stream's checkpoint directory stands, for a stream that goes on in Spark
// (startingLsn): the end of its last committed batch; the end of a batch planned but not
// committed when its bronze append landed (bronze holds its txn), else that batch's start;
// the start offset when no batch was planned; nullopt when the checkpoint has no start yet.
// Throws NotFoundError when the directory holds no checkpoint.
std::optional<Offset> NativeHandoverOffset(const std::string& checkpoint_dir);

}  // namespace mssql_cdc
