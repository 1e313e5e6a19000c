// The plans table: the key values of a stream's chunked snapshots, next to its bronze table
// (`<bronze>_snapshot_plans`), so that the facts table, which many streams and readers share,
// holds none (docs/decisions/0013-chunk-plans-next-to-bronze.md). A plan is written once, in
// one commit tagged txn(<app_id>#snapplan.<S>, 0), and never changed: the snapshot_plan facts
// row records its digest, and a plan that no longer matches it is refused.
//
// Two layouts, told apart by their columns. A table made now has mssql-cdc-pyspark 0.8.0's
// (kEventRows): one row per snapshot event (snapshot, event, detail), the key's extent in the
// `snapshot_open` row, the plan whole in the `snapshot_plan` row and each chunk read in a
// `snapshot_chunk` row, so that either library can go on with a snapshot the other began.
// Tables made by earlier releases of this engine have one row per chunk (kChunkRows); their
// snapshots are continued in that layout.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lsn.h"
#include "core/time.h"
#include "snapshot/chunk_plan.h"

namespace mssql_cdc {

// Where the plans of bronze `target` live: the same spelling with `_snapshot_plans` appended
// (a path's last segment, or a table name's last part).
std::string PlansTableFor(const std::string& target);

// The txn app id of a plan's commit (version 0), in the plans table and the facts table.
std::string PlanTxnAppId(const std::string& app_id, const Lsn& snapshot);

// app_id, snapshot, capture_instance, chunk, lo, hi (bounds as JSON text), planned_rows,
// kind, keys (JSON list), chunk_rows, planned_at.
std::shared_ptr<arrow::Schema> PlansSchema();

// How a plans table keeps its plans: this engine's row per chunk, or 0.8.0's row per event.
enum class PlansLayout { kChunkRows, kEventRows };

// The layout of a plans table with these columns: kEventRows for 0.8.0's (snapshot, event and
// detail, no app_id), else kChunkRows (whose columns the table checks hold).
PlansLayout PlansLayoutOf(const std::vector<std::string>& columns);

// snapshot, event, detail (JSON text): the layout of a plans table made now.
std::shared_ptr<arrow::Schema> PlanEventsSchema();

// A snapshot opened at S, as 0.8.0 records it: its `snapshot_open` row, `detail` being the
// facts row's detail with the key columns and the key's extent added.
std::shared_ptr<arrow::RecordBatch> OpenToEventRows(const Lsn& snapshot,
                                                    const nlohmann::ordered_json& detail);

// The plan as 0.8.0 records it: its `snapshot_plan` row (kind, keys, chunk_rows and every
// chunk's bounds in the detail).
std::shared_ptr<arrow::RecordBatch> PlanToEventRows(const ChunkPlan& plan, const Lsn& snapshot);

// A chunk bronze holds, as 0.8.0 records it: one `snapshot_chunk` row each.
struct ChunkRead {
  int chunk = 0;
  std::int64_t wave = 0;
  bool last = false;
};
std::shared_ptr<arrow::RecordBatch> ChunksToEventRows(const ChunkPlan& plan, const Lsn& snapshot,
                                                      const std::vector<ChunkRead>& chunks);

std::shared_ptr<arrow::RecordBatch> PlanToRecordBatch(const ChunkPlan& plan,
                                                      const std::string& app_id,
                                                      const Lsn& snapshot,
                                                      const std::string& capture_instance,
                                                      UtcMicros planned_at);

// The plan of (app_id, snapshot) among the plans table's rows, in either layout (0.8.0's rows
// name no app_id: a plans table belongs to one bronze table, whose snapshot S is the key);
// nullopt when it holds none. ConfigError when the rows cannot be a plan (a chunk missing or
// twice, a bound that is not JSON, kinds that differ): the table was changed by hand.
std::optional<ChunkPlan> PlanFromTable(const arrow::Table& rows, const std::string& app_id,
                                       const Lsn& snapshot, const std::string& plans_table);

}  // namespace mssql_cdc
