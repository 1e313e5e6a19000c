// The plans table: the chunk bounds of a stream's chunked snapshots, next to its bronze table
// (`<bronze>_snapshot_plans`), so that the facts table, which many streams and readers share,
// holds no source key values (docs/decisions/0013-chunk-plans-next-to-bronze.md). One row per
// chunk; a plan is written once, in one commit tagged txn(<app_id>#snapplan.<S>, 0), and never
// changed: the snapshot_plan facts row records its digest, and a plan that no longer matches
// it is refused.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <optional>
#include <string>

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

std::shared_ptr<arrow::RecordBatch> PlanToRecordBatch(const ChunkPlan& plan,
                                                      const std::string& app_id,
                                                      const Lsn& snapshot,
                                                      const std::string& capture_instance,
                                                      UtcMicros planned_at);

// The plan of (app_id, snapshot) among the plans table's rows; nullopt when it holds none.
// ConfigError when the rows cannot be a plan (a chunk missing or twice, a bound that is not
// JSON, kinds that differ): the table was changed by hand.
std::optional<ChunkPlan> PlanFromTable(const arrow::Table& rows, const std::string& app_id,
                                       const Lsn& snapshot, const std::string& plans_table);

}  // namespace mssql_cdc
