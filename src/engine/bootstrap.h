// Bootstrap (docs/snapshots.md, full mode): the source table's current rows as
// operation-0 rows in one bronze commit, stamped with the max LSN L recorded before the read
// (invariant 5 of docs/invariants.md), a `bootstrap` facts row, and L as where the stream starts.
//
// The table is read in key ranges, in parallel (snapshot/range_plan.h, parallel_snapshot.h),
// READ COMMITTED or SNAPSHOT as the options say, never NOLOCK. The rows stream into bronze's
// data files as they are read (memory bounded by the ranges' batches), and are named in one
// commit at the end; the files are listed in the checkpoint's staged list "snapshot"
// (staged_files.h) until then.
//
// A snapshot of the table that bronze holds already (of any capture instance of it: a seed, a
// snapshot() call, a stream before this checkpoint) is the bootstrap's: nothing is read.
//
// With a facts table, a `snapshot_open` row (mode full) is written before the read, tagged
// txn(<app_id>#open, generation), and the `bootstrap` (or `resnapshot`) row after the commit,
// tagged txn(<app_id>#events, generation).
//
// Crash safety: L is written to <checkpoint>/snapshot.json ("open") before the read, so a run
// that dies mid-bootstrap retakes the snapshot at the same L. The bronze append carries
// txn(<app_id>#snapshot, 0) and the facts row txn(<app_id>#events, 0): a retake after the
// append landed reads nothing and writes nothing twice, and takes the row count from bronze's
// rows with _snapshot = L.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>
#include <nlohmann/json.hpp>

#include "core/offset.h"
#include "delta/actions.h"
#include "delta/grouped_appender.h"
#include "delta/table.h"
#include "engine/snapshot_request.h"
#include "snapshot/parallel_snapshot.h"
#include "snapshot/range_plan.h"
#include "snapshot/snapshot_finder.h"
#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

class SourceClock;
class StreamCheckpoint;

// The tables a bootstrap writes: bronze, and the facts table when the stream has one. The
// engine writes Delta tables at paths (DeltaBootstrapTables); Spark mode writes tables named in
// a catalog through its session. Each append carries its txn, so a retake never writes twice.
class BootstrapTables {
 public:
  virtual ~BootstrapTables() = default;
  // Whether bronze holds the snapshot taken at `lsn` under `txn` (it landed before a crash).
  virtual bool HoldsSnapshot(const delta::Txn& txn, const Lsn& lsn) = 0;
  // Appends the snapshot's rows (read from `rows` as they come, aligned to bronze) in one
  // bronze commit tagged `txn`, telling `on_file` each data file before it is created. True
  // when this call wrote them; false when that is not certain (another writer may have held
  // the txn).
  virtual bool AppendSnapshot(ParallelSnapshot& rows, const delta::Txn& txn,
                              const std::string& user_metadata,
                              const std::function<void(const std::string&)>& on_file) = 0;
  // The newest snapshot of the table bronze holds already (snapshot/snapshot_finder.h), of
  // any of `instances` (the table's capture instances).
  virtual std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) = 0;
  // The rows of bronze stamped _snapshot = lsn.
  virtual std::int64_t SnapshotRows(const Lsn& lsn) = 0;
  virtual bool has_facts() const = 0;
  // Appends the bootstrap's facts row tagged `txn`.
  virtual void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& row,
                           const delta::Txn& txn) = 0;
  // Bronze's version after the snapshot's commit; -1 when unknown.
  virtual std::int64_t bronze_version() const { return -1; }
};

// BootstrapTables over Delta tables the engine opened; `facts` may be null.
class DeltaBootstrapTables final : public BootstrapTables {
 public:
  DeltaBootstrapTables(delta::DeltaTable& bronze, delta::GroupedAppender* facts,
                       delta::WriteOptions write = {})
      : bronze_(bronze), facts_(facts), write_(std::move(write)) {}
  bool HoldsSnapshot(const delta::Txn& txn, const Lsn& lsn) override;
  bool AppendSnapshot(ParallelSnapshot& rows, const delta::Txn& txn,
                      const std::string& user_metadata,
                      const std::function<void(const std::string&)>& on_file) override;
  std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) override;
  std::int64_t SnapshotRows(const Lsn& lsn) override;
  bool has_facts() const override { return facts_ != nullptr; }
  void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& row,
                   const delta::Txn& txn) override;
  std::int64_t bronze_version() const override { return version_; }

 private:
  std::vector<delta::AddFile> SnapshotFiles() const;
  delta::DeltaTable& bronze_;
  delta::GroupedAppender* facts_;
  delta::WriteOptions write_;
  std::int64_t version_ = -1;
};

struct BootstrapRequest {
  SnapshotSubject subject;
  SnapshotCause cause;
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::int64_t arrow_batch_size = 10'000;
  std::int64_t arrow_batch_bytes = kDefaultBatchDataBytes;
  int partitions = 1;                    // ranges read at once, at most
  std::int64_t min_range_rows = kMinRangeRows;
};

struct BootstrapResult {
  Offset offset;          // L and its UTC commit time
  std::int64_t rows = 0;  // the snapshot's rows
  bool taken_now = false; // false: the checkpoint held a finished snapshot
};

// The txn app ids of the bootstrap's bronze commit and of the stream's event facts rows.
std::string SnapshotTxnAppId(const std::string& app_id);
std::string EventsTxnAppId(const std::string& app_id);
// The txn app id of a full snapshot's `snapshot_open` facts row; its version is the generation.
std::string OpenTxnAppId(const std::string& app_id);

// A whole snapshot's rows as bronze takes them: `read`'s ranges read at once, each batch
// aligned to `bronze_schema` with _snapshot = the snapshot LSN (no _batch_id, no _chunk).
ParallelSnapshot WholeSnapshotReader(ParallelSnapshotRequest read, Source& source, SourcePool& sources,
                                     const std::shared_ptr<arrow::Schema>& bronze_schema);
// The userMetadata of a whole snapshot's bronze commit: {"snapshot", "lsn", "commit_ts"}.
nlohmann::json WholeSnapshotMetadata(const std::string& capture_instance, const Offset& stamp);

// `source` plans the ranges and reads the first; the others borrow from `sources`.
BootstrapResult RunBootstrap(const BootstrapRequest& request, Source& source, SourcePool& sources,
                             const SourceClock& clock, StreamCheckpoint& checkpoint,
                             BootstrapTables& tables);

}  // namespace mssql_cdc
