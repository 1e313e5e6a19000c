#include "reconcile/chunk_checks.h"

#include <gtest/gtest.h>

namespace mssql_cdc {
namespace {

ChunkPlan ThreeChunks() {
  ChunkPlan plan;
  plan.kind = "int";
  plan.keys = {"id"};
  plan.chunks = {{0, nullptr, 100, 10}, {1, 100, 200, 10}, {2, 200, nullptr, 10}};
  return plan;
}

ChunkedProgress Read(const std::vector<std::pair<int, std::int64_t>>& chunks) {
  ChunkedProgress progress;
  progress.opened.chunked = true;
  progress.opened.snapshot = Lsn::Parse("0x00000010000000100001");
  progress.planned = true;
  progress.chunks_total = 3;
  for (const auto& [chunk, rows] : chunks) progress.chunks.push_back(ChunkRecord{chunk, 0, rows});
  return progress;
}

std::vector<std::string> Types(const std::vector<ReportRow>& rows) {
  std::vector<std::string> types;
  for (const auto& row : rows) types.push_back(*row.failure_type);
  return types;
}

TEST(ChunkChecksTest, AWholeSnapshotPasses) {
  const std::string stamp = "0x00000010000000200001";
  EXPECT_TRUE(CheckChunks(ThreeChunks(), Read({{0, 10}, {1, 10}, {2, 9}}),
                          {{0, {10, stamp}}, {1, {10, stamp}}, {2, {9, stamp}}})
                  .empty());
}

TEST(ChunkChecksTest, EachCheckNamesTheChunkThatFails) {
  ChunkPlan gap = ThreeChunks();
  gap.chunks[1].lo = 101;  // keys 100 belong to no chunk
  const std::string stamp = "0x00000010000000200001";
  const auto tiling = CheckChunks(gap, Read({{0, 10}, {1, 10}, {2, 9}}), {{0, {10, stamp}}, {1, {10, stamp}}, {2, {9, stamp}}});
  ASSERT_EQ(Types(tiling), std::vector<std::string>{"CHUNK_TILING"});
  EXPECT_EQ(tiling[0].bucket_lo, "101");
  EXPECT_EQ(tiling[0].bucket_hi, "200");

  const auto rows = CheckChunks(ThreeChunks(), Read({{0, 10}, {1, 10}, {2, 9}}),
                                {{0, {10, stamp}}, {1, {7, stamp}}, {2, {9, stamp}}});
  ASSERT_EQ(Types(rows), std::vector<std::string>{"CHUNK_ROWS"});
  EXPECT_NE(rows[0].detail->find(R"("bronze_rows":7)"), std::string::npos) << *rows[0].detail;

  const auto stamped = CheckChunks(ThreeChunks(), Read({{0, 10}, {1, 10}, {2, 9}}),
                                   {{0, {10, stamp}}, {1, {10, "0x00000010000000000001"}}, {2, {9, stamp}}});
  EXPECT_EQ(Types(stamped), std::vector<std::string>{"CHUNK_STAMP"});

  const auto twice = CheckChunks(ThreeChunks(), Read({{0, 10}, {1, 10}, {1, 10}, {2, 9}}),
                                 {{0, {10, stamp}}, {1, {20, stamp}}, {2, {9, stamp}}});
  EXPECT_EQ(Types(twice), std::vector<std::string>{"CHUNK_TILING"});
}

}  // namespace
}  // namespace mssql_cdc
