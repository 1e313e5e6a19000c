// What reconcile asks of the lake: silver's tallies and rows, and the keys bronze holds
// changes for. The native engine answers from the Delta tables (DeltaLakeSide); Spark answers
// with queries the engine writes (python/mssql_cdc/reconcile.py). Reconcile itself, the same in
// both modes, is in reconcile.h.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/table.h"
#include "reconcile/chunk_checks.h"
#include "reconcile/key_grid.h"
#include "silver/key_units.h"

namespace mssql_cdc {

// The lake's tables as one reconcile sees them, read before the source is.
struct LakeState {
  std::string silver_name;
  std::shared_ptr<arrow::Schema> silver_schema;
  delta::StringMap silver_properties;
  std::int64_t silver_version = -1;
  // The LSN silver is current to: the later of the changes it applied and the snapshot it was
  // rebuilt from (its control row, read before its version).
  std::optional<std::string> silver_lsn;
  std::string bronze_name;
  std::shared_ptr<arrow::Schema> bronze_schema;
  std::string bronze_id;  // bronze's Delta table id
  bool has_facts = false;  // a facts table was named: the chunk checks run
};

class LakeSide {
 public:
  virtual ~LakeSide() = default;
  // Rows and key sums of silver's `key`, an integer or a date (`unit`: its values as day
  // numbers), per slice of `grid` (keys outside it in the edge slices; NULL keys left out).
  virtual SliceTallies TallySlices(const std::string& key, KeyUnit unit, const KeyGrid& grid) = 0;
  // Silver's row count.
  virtual std::int64_t CountRows() = 0;
  // Silver's rows (its captured columns and _start_lsn) whose `key` is in [lo, hi), bounds in
  // the key's `unit`; nullopt is an open end.
  virtual std::shared_ptr<arrow::Table> RowsBetween(const std::string& key, KeyUnit unit,
                                                    std::optional<std::int64_t> lo,
                                                    std::optional<std::int64_t> hi) = 0;
  // Every silver row (its captured columns and _start_lsn), a batch at a time; `visit` is
  // called at least once, first with a batch of no rows when silver has none, so that the
  // rows' schema is always seen.
  virtual void ScanAllRows(const std::function<void(const arrow::RecordBatch&)>& visit) = 0;
  // The `keys` columns of bronze's change rows (not snapshot rows) committed after `after_lsn`.
  virtual std::shared_ptr<arrow::Table> ChangedKeysAfter(const std::vector<std::string>& keys,
                                                         const std::string& after_lsn) = 0;
  // Bronze's snapshot events in the facts table (empty without one).
  virtual std::vector<SnapshotEvent> SnapshotEvents() = 0;
  // The chunk plan of (app_id, snapshot) in the plans table beside bronze; nullopt for none.
  virtual std::optional<ChunkPlan> Plan(const std::string& app_id, const Lsn& snapshot) = 0;
  // Bronze's rows of snapshot `snapshot_lsn`, per chunk, read after SnapshotEvents (bronze as new as
  // the facts rows it read, or newer).
  virtual std::map<int, ChunkTally> ChunkTallies(const std::string& snapshot_lsn) = 0;
};

// LakeSide over Delta tables the native engine opens.
class DeltaLakeSide : public LakeSide {
 public:
  DeltaLakeSide(delta::DeltaTable silver, delta::DeltaTable bronze, std::optional<std::string> facts);
  SliceTallies TallySlices(const std::string& key, KeyUnit unit, const KeyGrid& grid) override;
  std::int64_t CountRows() override;
  std::shared_ptr<arrow::Table> RowsBetween(const std::string& key, KeyUnit unit, std::optional<std::int64_t> lo,
                                            std::optional<std::int64_t> hi) override;
  void ScanAllRows(const std::function<void(const arrow::RecordBatch&)>& visit) override;
  std::shared_ptr<arrow::Table> ChangedKeysAfter(const std::vector<std::string>& keys,
                                                 const std::string& after_lsn) override;
  std::vector<SnapshotEvent> SnapshotEvents() override;
  std::optional<ChunkPlan> Plan(const std::string& app_id, const Lsn& snapshot) override;
  std::map<int, ChunkTally> ChunkTallies(const std::string& snapshot_lsn) override;

 private:
  delta::DeltaTable silver_;
  delta::DeltaTable bronze_;
  std::optional<std::string> facts_;
};

}  // namespace mssql_cdc
