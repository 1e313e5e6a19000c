// Bootstrap (reference-features 4.3, full mode): the source table's current rows as
// operation-0 rows in one bronze commit, stamped with the max LSN L recorded before the read
// (invariant 5), a `bootstrap` facts row, and L as where the stream starts.
//
// Crash safety: L is written to <checkpoint>/snapshot.json ("open") before the read, so a run
// that dies mid-bootstrap retakes the snapshot at the same L. The bronze append carries
// txn(<app_id>#snapshot, 0) and the facts row txn(<app_id>#events, 0): a retake after the
// append landed reads nothing and writes nothing twice, and takes the row count from bronze's
// rows with _snapshot = L.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "core/offset.h"
#include "delta/actions.h"
#include "source/source.h"

namespace mssql_cdc {

class SourceClock;
class StreamCheckpoint;
namespace delta {
class DeltaTable;
}

// The tables a bootstrap writes: bronze, and the facts table when the stream has one. The
// engine writes Delta tables at paths (DeltaBootstrapTables); Spark mode writes tables named in
// a catalog through its session. Each append carries its txn, so a retake never writes twice.
class BootstrapTables {
 public:
  virtual ~BootstrapTables() = default;
  // Whether bronze holds the snapshot taken at `lsn` under `txn` (it landed before a crash).
  virtual bool HoldsSnapshot(const delta::Txn& txn, const Lsn& lsn) = 0;
  // Appends the snapshot's rows in one bronze commit tagged `txn`. True when this call wrote
  // them; false when that is not certain (another writer may have held the txn).
  virtual bool AppendSnapshot(const std::vector<std::shared_ptr<arrow::RecordBatch>>& rows,
                              const delta::Txn& txn, const std::string& user_metadata) = 0;
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
  DeltaBootstrapTables(delta::DeltaTable& bronze, delta::DeltaTable* facts)
      : bronze_(bronze), facts_(facts) {}
  bool HoldsSnapshot(const delta::Txn& txn, const Lsn& lsn) override;
  bool AppendSnapshot(const std::vector<std::shared_ptr<arrow::RecordBatch>>& rows,
                      const delta::Txn& txn, const std::string& user_metadata) override;
  std::int64_t SnapshotRows(const Lsn& lsn) override;
  bool has_facts() const override { return facts_ != nullptr; }
  void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& row,
                   const delta::Txn& txn) override;
  std::int64_t bronze_version() const override { return version_; }

 private:
  delta::DeltaTable& bronze_;
  delta::DeltaTable* facts_;
  std::int64_t version_ = -1;
};

struct BootstrapRequest {
  CaptureInstanceInfo instance;
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::string app_id;
  std::string target;  // as the facts row names it
  std::int64_t arrow_batch_size = 10'000;
};

struct BootstrapResult {
  Offset offset;          // L and its UTC commit time
  std::int64_t rows = 0;  // the snapshot's rows
  bool taken_now = false; // false: the checkpoint held a finished snapshot
};

// The txn app ids of the bootstrap's bronze commit and of the stream's event facts rows.
std::string SnapshotTxnAppId(const std::string& app_id);
std::string EventsTxnAppId(const std::string& app_id);

BootstrapResult RunBootstrap(const BootstrapRequest& request, Source& source,
                             const SourceClock& clock, StreamCheckpoint& checkpoint,
                             BootstrapTables& tables);

}  // namespace mssql_cdc
