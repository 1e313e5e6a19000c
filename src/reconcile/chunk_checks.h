// reconcile's chunk checks (docs/reconcile.md), for the newest chunked snapshot of bronze,
// from the facts rows, the plans table and bronze alone (no source reads):
//   CHUNK_TILING  the plan's chunks tile the key space (each starting where the one before
//                 ends), and no chunk was read twice;
//   CHUNK_ROWS    bronze holds as many rows of each chunk as its facts row counted;
//   CHUNK_STAMP   no row of a chunk is stamped before the snapshot's LSN.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reconcile/reconcile_report.h"
#include "snapshot/chunk_plan.h"
#include "snapshot/chunked_state.h"

namespace mssql_cdc {

// Bronze's rows of one chunk of a snapshot.
struct ChunkTally {
  std::int64_t rows = 0;
  std::string oldest_stamp;  // the smallest _start_lsn
};

// The newest chunked snapshot among the events of any of the stream's generations; nullopt
// when none was opened.
std::optional<ChunkedProgress> NewestChunkedOfAny(const std::vector<SnapshotEvent>& events);

// The failures of the chunk checks as report rows (failure_type, detail, the chunk's bounds).
std::vector<ReportRow> CheckChunks(const ChunkPlan& plan, const ChunkedProgress& progress,
                                   const std::map<int, ChunkTally>& bronze);

}  // namespace mssql_cdc
