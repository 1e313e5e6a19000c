// A facts row: what one micro-batch or event did (docs/reference/tables.md). The engine fills
// every field it knows; NULL (nullopt) means not measured. Rows become Arrow batches in
// FactsSchema() for appends to the facts table, idempotent by (<app_id>#facts, batch_id).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/offset.h"
#include "core/time.h"
#include "engine/snapshot_request.h"

namespace mssql_cdc {

struct FactsRow {
  std::string app_id;
  std::optional<std::int64_t> batch_id;
  std::optional<std::int64_t> rows;
  std::optional<std::string> min_lsn, max_lsn;
  std::optional<UtcMicros> min_commit_ts, max_commit_ts;
  std::optional<std::int64_t> deletes, inserts, updates;
  std::optional<UtcMicros> started_at;
  std::optional<std::int64_t> duration_ms;
  std::optional<double> source_rtt_ms, read_seconds, read_mb;
  std::optional<std::int64_t> network_wait_ms;
  std::optional<UtcMicros> retention_watermark_ts;
  std::optional<double> retention_headroom_hours;
  std::optional<std::string> event;  // nullopt for a micro-batch
  std::optional<UtcMicros> lost_from_ts, lost_to_ts;
  std::optional<UtcMicros> source_max_commit_ts;
  std::optional<double> capture_lag_seconds, ingestion_lag_seconds;
  std::optional<std::string> end_lsn;
  std::optional<UtcMicros> end_commit_ts;
  std::optional<std::string> detail;
  std::optional<std::string> target;
  std::optional<UtcMicros> written_at;
};

std::shared_ptr<arrow::RecordBatch> FactsToRecordBatch(const std::vector<FactsRow>& rows);

// The `snapshot_open` row of a full snapshot about to be read at `offset` (its stamp), written
// before any row is read: detail {"mode": "full", "kind", "generation", "lost_from_ts",
// "lost_to_ts"} (docs/reference/tables.md, SnapshotOpenDetail).
FactsRow SnapshotOpenFactsRow(const std::string& app_id, const std::string& target,
                              const Offset& offset, const SnapshotCause& cause);

// The `snapshot_open` row of a chunked snapshot opened at `offset` (S): the same detail as a
// full snapshot's but mode "chunked". The key columns and the key's extent go to the plans
// table's `snapshot_open` row (plans_table.h), as 0.8.0 keeps them: 0.8.0 plans from a "plan"
// in this detail when there is one, so none may be here. (Rows of earlier releases had one:
// {"kind", "rows"}, the row estimate that chunked_state.h still reads.)
FactsRow ChunkedOpenFactsRow(const std::string& app_id, const std::string& target,
                             const Offset& offset, const SnapshotCause& cause);

// The `snapshot_plan` row: detail {"snapshot", "kind", "keys", "chunk_rows", "chunk_count",
// "digest" (ChunkPlanDigest), "plans_table"}. Rows of earlier releases counted the chunks in
// "chunks", which chunked_state.h still reads.
FactsRow SnapshotPlanFactsRow(const std::string& app_id, const std::string& target,
                              const Offset& snapshot, const std::string& kind,
                              const std::vector<std::string>& keys, std::int64_t chunk_rows,
                              int chunks, const std::string& digest,
                              const std::string& plans_table);

// A `snapshot_chunk` row: the chunk's rows read at stamp `stamp` (min_lsn), max_lsn the max
// LSN after the wave's read; detail {"snapshot", "chunk", "wave", "last"}; duration_ms the
// wave's, read_seconds the chunk's own when known.
struct ChunkFacts {
  int chunk = 0;
  std::int64_t rows = 0;
  std::optional<double> read_seconds;
  bool last = false;
};
FactsRow SnapshotChunkFactsRow(const std::string& app_id, const std::string& target,
                               const Lsn& snapshot, std::int64_t wave, const ChunkFacts& chunk,
                               const Offset& stamp, const std::optional<Lsn>& max_lsn_after,
                               UtcMicros started_at, std::int64_t duration_ms);

// The completion row of a chunked snapshot (`bootstrap` or `resnapshot`): min = max = S, rows
// the sum of its chunks, detail {"snapshot", "chunks", "rows", "last_lsn"}.
FactsRow ChunkedCompletionFactsRow(const std::string& app_id, const std::string& target,
                                   const std::string& kind, const Offset& snapshot, int chunks,
                                   std::int64_t rows, const Lsn& last_lsn, UtcMicros started_at,
                                   std::int64_t duration_ms);

// The `bootstrap` row of a stream whose snapshot (taken, found or seeded) stands at `offset`
// and holds `rows` rows; min, max and end LSN are the snapshot's.
FactsRow BootstrapFactsRow(const std::string& app_id, const std::string& target,
                           const Offset& offset, std::int64_t rows, UtcMicros started_at,
                           std::int64_t duration_ms);

// The bronze commit's userMetadata of a micro-batch: rows, min_lsn, max_lsn, min_commit_ts,
// max_commit_ts, deletes, inserts, updates, batch_id, app_id, and the batch's range when known:
// start_lsn (its start offset's LSN, exclusive) and end_lsn (the row's end_lsn), which
// batch_agreement.h compares with a checkpoint.
std::string BatchUserMetadata(const FactsRow& row, const std::optional<std::string>& start_lsn);

}  // namespace mssql_cdc
