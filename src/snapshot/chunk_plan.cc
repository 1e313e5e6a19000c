#include "snapshot/chunk_plan.h"

#include <algorithm>
#include <deque>
#include <limits>

#include <fmt/format.h>

#include "core/errors.h"
#include "snapshot/snapshot_key.h"

namespace mssql_cdc {
namespace {

using Wide = __int128;

std::int64_t CeilDiv(Wide a, Wide b) { return static_cast<std::int64_t>((a + b - 1) / b); }

// Counts [lo, hi) in slices of `width`, in queries of at most kMaxSlicesPerQuery slices; the
// non-empty slices, in key order, clipped to [lo, hi).
std::vector<KeyCell> CountCells(Source& source, const KeyQuery& query, std::int64_t lo,
                                std::int64_t hi, std::int64_t width) {
  std::vector<KeyCell> cells;
  Wide start = lo;
  while (start < hi) {
    // Whole slices that end at or before hi, at most kMaxSlicesPerQuery a query; a last
    // slice of what is left, so that no slice counts keys past hi (the next cell's).
    Wide slices = std::min<Wide>(kMaxSlicesPerQuery, (Wide(hi) - start) / width);
    Wide slice_width = width;
    if (slices < 1) {
      slices = 1;
      slice_width = Wide(hi) - start;
    }
    for (const SliceCount& slice : source.CountKeySlices(query, static_cast<std::int64_t>(start),
                                                         static_cast<std::int64_t>(slice_width),
                                                         static_cast<std::int64_t>(slices))) {
      const Wide cell_lo = start + Wide(slice.slice) * slice_width;
      cells.push_back({static_cast<std::int64_t>(cell_lo),
                       static_cast<std::int64_t>(cell_lo + slice_width), slice.rows});
    }
    start += slices * slice_width;
  }
  return cells;
}

ChunkPlan PlanIntegerChunks(const ChunkPlanRequest& request, const KeyQuery& query,
                            Source& source) {
  ChunkPlan plan;
  plan.kind = "int";
  plan.keys = query.key_columns;
  plan.chunk_rows = request.chunk_rows;
  const auto first = source.KeyAt(query, nullptr, 0);
  const auto last = source.LastKey(query);
  if (!first || !last) return plan;  // an empty table: nothing to read
  const std::int64_t min = first->get<std::int64_t>();
  const std::int64_t max = last->get<std::int64_t>();
  // The grid's end, exclusive; bigint's largest key makes the last slice end at it.
  const Wide end = Wide(max) + 1;
  const Wide values = end - min;
  const std::int64_t estimate = std::max<std::int64_t>(1, source.RowEstimate(request.instance.name));
  const Wide slices = std::clamp<Wide>(Wide(CeilDiv(estimate, request.chunk_rows)) * kSlicesPerChunk,
                                       1, values);
  const std::int64_t width = std::max<std::int64_t>(1, CeilDiv(values, slices));
  const std::int64_t top = end > std::numeric_limits<std::int64_t>::max()
                               ? std::numeric_limits<std::int64_t>::max()
                               : static_cast<std::int64_t>(end);

  // Slices over chunk_rows are counted again in finer slices, until each fits or is one value.
  std::deque<KeyCell> pending;
  for (const auto& cell : CountCells(source, query, min, top, width)) pending.push_back(cell);
  std::vector<KeyCell> cells;
  while (!pending.empty()) {
    KeyCell cell = pending.front();
    pending.pop_front();
    const Wide cell_values = Wide(cell.hi) - cell.lo;
    if (cell.rows <= request.chunk_rows || cell_values <= 1) {
      cells.push_back(cell);
      continue;
    }
    const Wide finer = std::clamp<Wide>(Wide(CeilDiv(cell.rows, request.chunk_rows)) * kSlicesPerChunk,
                                        2, cell_values);
    const std::int64_t finer_width = std::max<std::int64_t>(1, CeilDiv(cell_values, finer));
    auto parts = CountCells(source, query, cell.lo, cell.hi, finer_width);
    // In key order: the parts go before what follows the cell.
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_front(*it);
  }
  std::sort(cells.begin(), cells.end(), [](const KeyCell& a, const KeyCell& b) { return a.lo < b.lo; });
  plan.chunks = PackCells(cells, max, request.chunk_rows);
  return plan;
}

ChunkPlan PlanKeysetChunks(const ChunkPlanRequest& request, const KeyQuery& query,
                           Source& source) {
  ChunkPlan plan;
  plan.kind = "keyset";
  plan.keys = query.key_columns;
  plan.chunk_rows = request.chunk_rows;
  if (!source.KeyAt(query, nullptr, 0)) return plan;  // an empty table
  nlohmann::json lo = nullptr;
  for (int index = 0;; ++index) {
    auto hi = source.KeyAt(query, lo, request.chunk_rows);
    Chunk chunk{index, lo, hi ? *hi : nlohmann::json(nullptr), std::nullopt};
    if (hi) chunk.planned_rows = request.chunk_rows;
    plan.chunks.push_back(chunk);
    if (!hi) break;
    lo = std::move(*hi);
  }
  return plan;
}

}  // namespace

std::vector<Chunk> PackCells(const std::vector<KeyCell>& cells, std::int64_t max,
                             std::int64_t chunk_rows) {
  std::vector<Chunk> chunks;
  if (cells.empty()) return chunks;
  Chunk current{0, nullptr, nullptr, 0};  // open below: no key under MIN is older than S
  for (const KeyCell& cell : cells) {
    if (*current.planned_rows > 0 && *current.planned_rows + cell.rows > chunk_rows) {
      current.hi = cell.lo;
      chunks.push_back(current);
      current = Chunk{static_cast<int>(chunks.size()), cell.lo, nullptr, 0};
    }
    *current.planned_rows += cell.rows;
  }
  if (max < std::numeric_limits<std::int64_t>::max()) current.hi = max + 1;
  chunks.push_back(current);
  return chunks;
}

std::string ChunkPlanKind(const CaptureInstanceInfo& instance,
                          const std::vector<CapturedColumn>& columns,
                          const std::vector<std::string>& key_columns,
                          std::vector<std::string>* resolved_keys) {
  const SnapshotKey key = ResolveSnapshotKey(instance, columns, key_columns);
  if (key.columns.empty()) {
    throw ConfigError("capture instance '" + instance.name + "' cannot be snapshotted in chunks: " +
                      key.why_not + "; snapshot it whole (snapshot=\"full\"), or name a key that "
                      "can bound ranges with the snapshotKeys option");
  }
  if (resolved_keys) *resolved_keys = key.columns;
  return key.integer() ? "int" : "keyset";
}

ChunkPlan PlanChunks(const ChunkPlanRequest& request, Source& source) {
  if (request.chunk_rows < 1) {
    throw ConfigError("chunk_rows must be a whole number of rows, 1 or more, not " +
                      std::to_string(request.chunk_rows));
  }
  std::vector<std::string> keys;
  const std::string kind =
      ChunkPlanKind(request.instance, request.columns, request.key_columns, &keys);
  const KeyQuery query{request.instance.name, keys};
  return kind == "int" ? PlanIntegerChunks(request, query, source)
                       : PlanKeysetChunks(request, query, source);
}

std::string ChunkPlanDigest(const ChunkPlan& plan) {
  nlohmann::json chunks = nlohmann::json::array();
  for (const auto& chunk : plan.chunks) chunks.push_back({chunk.index, chunk.lo, chunk.hi});
  const std::string text =
      nlohmann::json{{"kind", plan.kind}, {"keys", plan.keys}, {"chunk_rows", plan.chunk_rows},
                     {"chunks", chunks}}.dump();
  // FNV-1a, 64 bits: it tells an edited plan from the planned one; it is not a secret.
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace mssql_cdc
