// The chunks of a chunked snapshot (docs/snapshots.md, "Chunked snapshot"), planned once
// by the first backfill and fixed while the snapshot is open:
//   - one integer key: rows counted per slice of a grid over [MIN, MAX] in one GROUP BY a
//     query (about 16 slices per chunk_rows, at most kMaxSlicesPerQuery slices per query);
//     a slice holding more than chunk_rows rows is counted again finer, down to one value;
//     consecutive slices are packed into chunks of at most chunk_rows rows. The chunks tile
//     the keys up to MAX + 1: the first starts open, each starts where the one before ends,
//     the last ends at MAX + 1 (a key past it was inserted after S: the stream has it).
//   - any other key: keyset bounds every chunk_rows keys (Source::KeyAt), all found before
//     the first wave. The first chunk starts open and the last ends open, so the chunks tile
//     the whole key space; the last may read rows inserted past MAX after S, which are newer
//     than the stamp, as any chunk's rows may be.
// Planning reads the key once, under the snapshot's isolation level. A table that cannot be
// read in ranges (no key, a key type that cannot bound one) cannot be snapshotted in chunks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/source.h"
#include "source/source_pool.h"

namespace mssql_cdc {

inline constexpr std::int64_t kDefaultChunkRows = 1'000'000;
inline constexpr std::int64_t kSlicesPerChunk = 16;
inline constexpr std::int64_t kMaxSlicesPerQuery = 100'000;

struct Chunk {
  int index = 0;
  nlohmann::json lo;  // inclusive; null: from the first key
  nlohmann::json hi;  // exclusive; null: to the last key
  std::optional<std::int64_t> planned_rows;  // counted when planned (integer keys)
};

struct ChunkPlan {
  std::string kind;                 // "int" or "keyset"
  std::vector<std::string> keys;    // the key columns the bounds apply to
  std::int64_t chunk_rows = kDefaultChunkRows;
  std::vector<Chunk> chunks;        // empty for an empty table
};

// The rows of [lo, hi) of an integer key, counted when planning.
struct KeyCell {
  std::int64_t lo = 0;
  std::int64_t hi = 0;  // exclusive
  std::int64_t rows = 0;
};

// Packs consecutive cells (in key order, non-empty, not overlapping) into chunks of at most
// `chunk_rows` rows (a cell holding more is a chunk of its own) tiling the keys below max + 1,
// the first chunk open below; a max of bigint's largest value leaves the last chunk open.
std::vector<Chunk> PackCells(const std::vector<KeyCell>& cells, std::int64_t max,
                             std::int64_t chunk_rows);

// The chunk plan's kind for `key`, or the ConfigError a chunked snapshot of the table gets
// ("int" for one integer column, else "keyset").
std::string ChunkPlanKind(const CaptureInstanceInfo& instance,
                          const std::vector<CapturedColumn>& columns,
                          const std::vector<std::string>& key_columns,
                          std::vector<std::string>* resolved_keys = nullptr);

struct ChunkPlanRequest {
  CaptureInstanceInfo instance;
  std::vector<CapturedColumn> columns;   // the instance's, for the key's types
  std::vector<std::string> key_columns;  // snapshotKeys; empty: the instance's index
  std::int64_t chunk_rows = kDefaultChunkRows;
  int partitions = 1;                    // grid counts run at once (integer keys)
  // The table's rows as estimated when the snapshot opened; asked of the source when absent.
  std::optional<std::int64_t> rows_estimate;
};

// Plans every chunk, asking `source` (count by grid, or keyset seeks). An integer key's grid
// is cut into `partitions` ranges counted at once, on `source` and on what `more` lends, so
// that planning takes a `partitions`th of one ordered pass over the key.
ChunkPlan PlanChunks(const ChunkPlanRequest& request, Source& source, SourcePool* more = nullptr);

// A digest of the plan's content (kind, keys, chunk_rows, each chunk's bounds): what the
// snapshot_plan facts row records, so that a plans table changed by hand is found out.
std::string ChunkPlanDigest(const ChunkPlan& plan);

}  // namespace mssql_cdc
