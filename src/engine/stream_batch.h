// One micro-batch of a stream, step by step (the order is stream.h's contract): plan its end
// and check retention, write its offsets, check that bronze agrees with the checkpoint
// (batch_agreement.h), read its ranges in parallel, re-check retention, append to bronze,
// append its facts rows, write its commit marker, advance the verdict.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/timezone.h"
#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/batch_reader.h"
#include "engine/facts.h"
#include "engine/staged_files.h"
#include "engine/stream_config.h"
#include "engine/stream_checkpoint.h"
#include "schema_change/batch_schema.h"
#include "source/source.h"

namespace mssql_cdc {

// What a stream holds once started; shared by its batches.
struct StreamContext {
  StreamConfig config;
  std::shared_ptr<SourcePool> sources;       // config.services.sources, or the stream's own
  Source* source = nullptr;  // lent for the current turn: planning, measuring, the first range
  std::optional<SourceClock> clock;
  CaptureInstanceInfo instance;
  // Every capture instance of the table the stream has listed, once seen always kept: bronze
  // may hold rows of each (config.after_bronze).
  std::vector<std::string> instance_names;
  // The captured columns the stream reads with (the union of its table's instances), and the
  // bronze schema they make; a batch that meets columns they cannot hold widens both
  // (schema_change/batch_schema.h).
  std::vector<CapturedColumn> columns;
  arrow::FieldVector read_fields;  // the output fields of `columns` (the `columns` option's types)
  bool columns_listed = false;     // by the `columns` option: never widened by a batch
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::optional<delta::DeltaTable> bronze;
  std::shared_ptr<delta::GroupedAppender> facts;   // when the stream has a facts table
  std::shared_ptr<VerdictWriter> verdicts;         // when it tracks a verdict
  std::optional<StreamCheckpoint> checkpoint;
  int partitions = 1;
  // Bronze's txn version for the app id as the checkpoint knows it (RecoveryPoint::bronze_txn),
  // and whether this run has compared the range of bronze's newest batch with the checkpoint.
  std::int64_t bronze_txn = -1;
  bool bronze_range_checked = false;
  // Staged file lists of units not yet done were left by the last cleanup (an object-store
  // checkpoint, where they may be another live run's): cleaned again after each commit.
  bool staged_lists_left = false;
  // What bounds a batch's memory: the bytes after which a source's record batch ends, and how
  // the data file streams buffer row groups and roll files.
  std::int64_t arrow_batch_bytes = kDefaultBatchDataBytes;
  delta::WriteOptions write_options;
};

// Deletes the data files that crashed attempts staged and no commit names (staged_files.h):
// every unit's when the checkpoint is locked (a local one), else only the units done (a batch
// with its commit marker, a finished snapshot). Sets staged_lists_left.
void DeleteAbandonedStagedFiles(StreamContext& context);

// Adds the names of `instances` to context.instance_names.
void NoteInstances(StreamContext& context, const std::vector<CaptureInstanceInfo>& instances);
// Calls config.after_bronze, when set.
void AfterBronze(const StreamContext& context);

struct BatchOutcome {
  BatchCommit commit;
  Offset end;
  FactsRow facts;  // the micro-batch row as written (or as it would be without a facts table)
};

// The txn app id of a stream's micro-batch facts rows.
std::string FactsTxnAppId(const std::string& app_id);

// The stats of bronze's rows of micro-batch `batch_id` of `app_id`, read a row group at a time
// from the files of the commit that holds it (or, when that commit left the log, from every
// file): a replayed batch whose bronze commit landed before a crash is not read again.
RowStats BronzeBatchStats(delta::DeltaTable& bronze, const std::string& app_id,
                          std::int64_t batch_id);

// The row counts and ranges of a micro-batch facts row from its rows' stats; the LSN and
// commit time ranges stay NULL on a batch without rows (docs/reference/tables.md).
void FillRowStats(FactsRow& row, const RowStats& stats);

// The `data_skipped` event of a batch whose range cleanup purged: it resumed at `read_from`
// (or the LSN after start when unset) and lost the changes from the start offset's commit time
// to `lost_to_ts`; `certain` is false when the loss was seen only after the read, with
// `reason` saying why. Every field but written_at is set.
FactsRow DataSkippedRow(const std::string& app_id, const std::string& target,
                        const BatchOffsets& offsets, bool certain,
                        const std::optional<UtcMicros>& lost_to_ts, const std::string& reason);

// The facts row of a schema event of micro-batch `batch_id` (docs/reference/tables.md): no
// rows, min = max = end LSN = the event's LSN, its commit time as end_commit_ts, the DDL text
// or the switch as detail. Every field but written_at is set.
FactsRow SchemaEventRow(const std::string& app_id, const std::string& target,
                        std::int64_t batch_id, const SchemaEvent& event);

class BatchRunner {
 public:
  explicit BatchRunner(StreamContext& context) : context_(context) {}

  // Plans the batch after `start` up to `target` and writes its offsets; nullopt when nothing
  // follows start. Throws DataLossError (writing nothing) when cleanup purged the range's
  // beginning and failOnDataLoss is on.
  std::optional<BatchOffsets> Plan(std::int64_t batch_id, const Offset& start,
                                   const Lsn& target);

  // Runs a planned batch (new or replayed) to its commit marker and the verdict.
  BatchOutcome Execute(BatchOffsets offsets);

 private:
  // The retention check before reading, on the instance that serves the batch's first LSN:
  // DataLossError (naming an instance disabled before the stream passed its successor's
  // start), or with failOnDataLoss=false sets read_from to the min LSN. True when it changed
  // `offsets`.
  bool CheckBeforeRead(BatchOffsets& offsets, const TableInstances& instances);
  // The table's instances now (sys.sp_cdc_help_change_data_capture, listed at every planning).
  TableInstances ListInstances();
  // The schema changes of the batch's range; widens the stream's columns and bronze schema
  // when they cannot hold what the range holds (bronze then takes the new columns, or refuses
  // with SchemaChangedError before anything is read). Returns the facts events to write.
  std::vector<FactsRow> FollowSchema(const BatchOffsets& offsets, const TableInstances& instances,
                                     BatchSchema& schema);
  // A replayed batch whose bronze commit landed before the crash: facts from bronze's rows,
  // without reading the source again (which cleanup may have purged meanwhile).
  BatchOutcome FinishFromBronze(const BatchOffsets& offsets, const TableInstances& instances);
  // Fills the measured fields of a micro-batch row (batch_measures.h) and its end offset from
  // the ranges read and the retention seen after the read (read again when nullopt).
  void Measure(FactsRow& row, const BatchOffsets& offsets, const std::vector<RangeMeasures>& ranges,
               const std::optional<Retention>& after_read);
  FactsRow SkippedRow(const BatchOffsets& offsets, bool certain,
                      const std::optional<UtcMicros>& lost_to_ts, const std::string& reason);
  // `staged_files` lists the batch's data files until its commit marker (staged_files.h).
  BatchOutcome Finish(const BatchOffsets& offsets, FactsRow row,
                      std::vector<FactsRow> events, std::int64_t bronze_version,
                      StagedFileList* staged_files = nullptr);
  void Hook(BatchStep step, std::int64_t batch_id);
  // With snapshot_on_switch, after a batch that switched instances: the table's rows into
  // bronze (switch_snapshot.h), before the batch's commit marker.
  void SnapshotIfSwitched(const BatchOffsets& offsets, StagedFileList* staged_files);

  StreamContext& context_;
  // The newer instance the running batch switched to (FollowSchema), if any.
  std::optional<CaptureInstanceInfo> switched_to_;
};

}  // namespace mssql_cdc
