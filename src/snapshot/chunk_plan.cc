#include "snapshot/chunk_plan.h"

#include <algorithm>
#include <deque>
#include <limits>

#include <fmt/format.h>

#include "core/errors.h"
#include "snapshot/snapshot_key.h"
#include "source/parallel_reads.h"

namespace mssql_cdc {
namespace {

using Wide = __int128;

std::int64_t CeilDiv(Wide a, Wide b) { return static_cast<std::int64_t>((a + b - 1) / b); }

// The Sources a plan counts on: `first`, and as many more as `more` lends at once.
struct Counters {
  Source& first;
  SourcePool* more = nullptr;
  int parts = 1;  // the grid is cut into this many queries at least, to count them at once
};

struct SliceQuery {
  Wide start;
  Wide width;
  Wide slices;
};

// Counts [lo, hi) in slices of `width`, in queries of at most kMaxSlicesPerQuery slices (and
// at most a `parts`th of the slices, so that every counter has one); the non-empty slices, in
// key order, clipped to [lo, hi).
std::vector<KeyCell> CountCells(Counters& counters, const KeyQuery& query, std::int64_t lo,
                                std::int64_t hi, std::int64_t width) {
  const Wide whole = (Wide(hi) - lo) / width;
  const Wide per_query =
      std::clamp<Wide>((whole + counters.parts - 1) / counters.parts, 1, kMaxSlicesPerQuery);
  std::vector<SliceQuery> queries;
  for (Wide start = lo; start < hi;) {
    // Whole slices that end at or before hi; a last slice of what is left, so that no slice
    // counts keys past hi (the next cell's).
    SliceQuery q{start, width, std::min<Wide>(per_query, (Wide(hi) - start) / width)};
    if (q.slices < 1) q = {start, Wide(hi) - start, 1};
    queries.push_back(q);
    start += q.slices * q.width;
  }
  std::vector<std::vector<KeyCell>> counted(queries.size());
  auto count = [&](std::size_t i, Source& source) {
    const SliceQuery& q = queries[i];
    for (const SliceCount& slice : source.CountKeySlices(query, static_cast<std::int64_t>(q.start),
                                                         static_cast<std::int64_t>(q.width),
                                                         static_cast<std::int64_t>(q.slices))) {
      const Wide cell_lo = q.start + Wide(slice.slice) * q.width;
      counted[i].push_back({static_cast<std::int64_t>(cell_lo),
                            static_cast<std::int64_t>(cell_lo + q.width), slice.rows});
    }
  };
  if (counters.more && queries.size() > 1) {
    RunOnSources(queries.size(), counters.first, *counters.more, count);
  } else {
    for (std::size_t i = 0; i < queries.size(); ++i) count(i, counters.first);
  }
  std::vector<KeyCell> cells;
  for (auto& part : counted) cells.insert(cells.end(), part.begin(), part.end());
  return cells;
}

ChunkPlan PlanIntegerChunks(const ChunkPlanRequest& request, const KeyQuery& query,
                            Counters& counters) {
  Source& source = counters.first;
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
  const std::int64_t estimate = std::max<std::int64_t>(
      1, request.rows_estimate ? *request.rows_estimate : source.RowEstimate(request.instance.name));
  const Wide slices = std::clamp<Wide>(Wide(CeilDiv(estimate, request.chunk_rows)) * kSlicesPerChunk,
                                       1, values);
  const std::int64_t width = std::max<std::int64_t>(1, CeilDiv(values, slices));
  const std::int64_t top = end > std::numeric_limits<std::int64_t>::max()
                               ? std::numeric_limits<std::int64_t>::max()
                               : static_cast<std::int64_t>(end);

  // Slices over chunk_rows are counted again in finer slices, until each fits or is one value.
  std::deque<KeyCell> pending;
  for (const auto& cell : CountCells(counters, query, min, top, width)) pending.push_back(cell);
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
    auto parts = CountCells(counters, query, cell.lo, cell.hi, finer_width);
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

ChunkPlan PlanChunks(const ChunkPlanRequest& request, Source& source, SourcePool* more) {
  if (request.chunk_rows < 1) {
    throw ConfigError("chunk_rows must be a whole number of rows, 1 or more, not " +
                      std::to_string(request.chunk_rows));
  }
  std::vector<std::string> keys;
  const std::string kind =
      ChunkPlanKind(request.instance, request.columns, request.key_columns, &keys);
  const KeyQuery query{request.instance.name, keys};
  if (kind != "int") return PlanKeysetChunks(request, query, source);
  Counters counters{source, more, more ? std::max(1, request.partitions) : 1};
  return PlanIntegerChunks(request, query, counters);
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
