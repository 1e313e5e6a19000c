#include "reconcile/chunk_checks.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace mssql_cdc {
namespace {

ReportRow ChunkFailure(const Chunk* chunk, const char* type, const nlohmann::json& detail) {
  ReportRow row;
  if (chunk != nullptr) {
    if (!chunk->lo.is_null()) row.bucket_lo = chunk->lo.dump();
    if (!chunk->hi.is_null()) row.bucket_hi = chunk->hi.dump();
  }
  row.failure_type = type;
  row.detail = detail.dump();
  return row;
}

}  // namespace

std::optional<ChunkedProgress> NewestChunkedOfAny(const std::vector<SnapshotEvent>& events) {
  std::set<std::string> app_ids;
  for (const auto& event : events) app_ids.insert(event.app_id);
  std::optional<ChunkedProgress> newest;
  for (const auto& app_id : app_ids) {
    auto found = NewestChunked(events, app_id);
    if (found && (!newest || newest->opened.snapshot < found->opened.snapshot)) newest = std::move(found);
  }
  return newest;
}

std::vector<ReportRow> CheckChunks(const ChunkPlan& plan, const ChunkedProgress& progress,
                                   const std::map<int, ChunkTally>& bronze) {
  std::vector<ReportRow> failures;
  const std::string snapshot = progress.opened.snapshot.ToString();
  std::vector<Chunk> chunks = plan.chunks;
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.index < b.index; });
  // Each chunk starts where the one before ends. The ends are the plan's: an integer plan ends
  // at the largest key planned, keys past it arriving as changes.
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    if (chunks[i].lo != chunks[i - 1].hi) {
      failures.push_back(ChunkFailure(&chunks[i], "CHUNK_TILING",
                                      {{"snapshot", snapshot}, {"chunk", chunks[i].index},
                                       {"lo", chunks[i].lo}, {"expected_lo", chunks[i - 1].hi}}));
    }
  }
  auto chunk_at = [&](int index) -> const Chunk* {
    for (const auto& chunk : chunks) {
      if (chunk.index == index) return &chunk;
    }
    return nullptr;
  };
  std::map<int, std::int64_t> counted;  // facts rows per chunk
  for (const ChunkRecord& record : progress.chunks) {
    if (counted.count(record.chunk) > 0) {
      failures.push_back(ChunkFailure(chunk_at(record.chunk), "CHUNK_TILING",
                                      {{"snapshot", snapshot}, {"chunk", record.chunk}, {"read", "twice"}}));
    }
    counted[record.chunk] += record.rows;
  }
  for (const auto& [chunk, rows] : counted) {
    const auto found = bronze.find(chunk);
    const std::int64_t held = found == bronze.end() ? 0 : found->second.rows;
    if (held != rows) {
      failures.push_back(ChunkFailure(chunk_at(chunk), "CHUNK_ROWS",
                                      {{"snapshot", snapshot}, {"chunk", chunk}, {"facts_rows", rows}, {"bronze_rows", held}}));
    }
  }
  for (const auto& [chunk, tally] : bronze) {
    if (counted.count(chunk) == 0) {
      failures.push_back(ChunkFailure(chunk_at(chunk), "CHUNK_ROWS",
                                      {{"snapshot", snapshot}, {"chunk", chunk}, {"facts_rows", nullptr},
                                       {"bronze_rows", tally.rows}}));
    }
    if (!tally.oldest_stamp.empty() && tally.oldest_stamp < snapshot) {
      failures.push_back(ChunkFailure(chunk_at(chunk), "CHUNK_STAMP",
                                      {{"snapshot", snapshot}, {"chunk", chunk}, {"oldest_stamp", tally.oldest_stamp}}));
    }
  }
  return failures;
}

}  // namespace mssql_cdc
