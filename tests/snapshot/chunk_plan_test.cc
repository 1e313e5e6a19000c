// The chunks of a chunked snapshot: a grid counted per slice and packed for one integer key
// (refined where a slice holds more than chunk_rows), keyset bounds every chunk_rows keys for
// any other key; both tile the key space. And what the facts rows say of a snapshot's state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "snapshot/chunk_plan.h"
#include "snapshot/chunked_state.h"
#include "source/sim/sim_source.h"
#include "tests/testing/cdc_table.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using json = nlohmann::json;

std::vector<std::string> Bounds(const std::vector<Chunk>& chunks) {
  std::vector<std::string> out;
  for (const auto& chunk : chunks) out.push_back(chunk.lo.dump() + ".." + chunk.hi.dump());
  return out;
}

TEST(PackCellsTest, ConsecutiveCellsUpToChunkRowsTilingTheKeys) {
  const std::vector<KeyCell> cells = {{0, 10, 4}, {10, 20, 3}, {20, 30, 5}, {40, 50, 9}, {50, 51, 1}};
  const auto chunks = PackCells(cells, 50, 8);
  EXPECT_THAT(Bounds(chunks), ::testing::ElementsAre("null..20", "20..40", "40..50", "50..51"));
  std::vector<std::int64_t> rows;
  for (const auto& c : chunks) rows.push_back(*c.planned_rows);
  // A cell over chunk_rows (9 > 8, one that could not be cut finer) is a chunk of its own.
  EXPECT_THAT(rows, ::testing::ElementsAre(7, 5, 9, 1));
  EXPECT_TRUE(PackCells({}, 0, 8).empty());
  EXPECT_EQ(PackCells({{INT64_MAX - 5, INT64_MAX, 2}}, INT64_MAX, 8).back().hi, json(nullptr));
}

class ChunkPlanTest : public ::testing::Test {
 protected:
  ChunkPlanTest() : path_(dir_.File("cdc.db")) {
    auto db = sim::SimDatabase::Create(path_, {});
    testing::CreateCdcTable(*db, "dbo.ints", {"id bigint not null", "v int"}, {"id"});
    testing::CreateCdcTable(*db, "dbo.pairs", {"a nvarchar(10) not null", "b int not null"}, {"a", "b"});
    testing::CreateCdcTable(*db, "dbo.floats", {"f float not null"}, {"f"});
    testing::CreateCdcTable(*db, "dbo.empty", {"id int not null"}, {"id"});
    auto t = db->Begin();
    for (int i = 0; i < 1000; ++i) {
      // Skewed: 900 keys in [0, 900), 100 spread up to 10^9, so uniform slices would not do.
      const std::int64_t id = i < 900 ? i : static_cast<std::int64_t>(i) * 1'000'000;
      ids_.push_back(id);
      t->Insert(sim::ParseTableName("dbo.ints"), {{"id", id}, {"v", i}});
      t->Insert(sim::ParseTableName("dbo.pairs"), {{"a", i % 3 ? "x" : "y"}, {"b", i}});
    }
    t->Insert(sim::ParseTableName("dbo.floats"), {{"f", 1.5}});
    t->Commit();
    source_ = OpenSimSource(path_);
  }

  ChunkPlan Plan(const std::string& ci, std::int64_t chunk_rows, std::vector<std::string> key = {},
                 int partitions = 1, SourcePool* more = nullptr) {
    ChunkPlanRequest request;
    request.instance = source_->ResolveCaptureInstance(ci);
    request.columns = source_->CapturedColumns(ci);
    request.key_columns = std::move(key);
    request.chunk_rows = chunk_rows;
    request.partitions = partitions;
    return PlanChunks(request, *source_, more);
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Source> source_;
  std::vector<std::int64_t> ids_;
};

TEST_F(ChunkPlanTest, AnIntegerKeyIsCountedByGridAndPackedUnderChunkRows) {
  const ChunkPlan plan = Plan("dbo_ints", 100);
  EXPECT_EQ(plan.kind, "int");
  EXPECT_THAT(plan.keys, ::testing::ElementsAre("id"));
  ASSERT_GE(plan.chunks.size(), 10u);
  EXPECT_EQ(plan.chunks.front().lo, json(nullptr));
  EXPECT_EQ(plan.chunks.back().hi, json(999'000'001));  // MAX + 1
  std::int64_t planned = 0;
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    const auto& chunk = plan.chunks[i];
    EXPECT_EQ(chunk.index, static_cast<int>(i));
    if (i > 0) EXPECT_EQ(chunk.lo, plan.chunks[i - 1].hi) << "chunk " << i;  // they tile
    // The counts are exact: each chunk holds what it planned, at most chunk_rows.
    std::int64_t rows = 0;
    for (auto id : ids_) {
      if ((chunk.lo.is_null() || id >= chunk.lo.get<std::int64_t>()) && id < chunk.hi.get<std::int64_t>()) ++rows;
    }
    EXPECT_EQ(rows, *chunk.planned_rows) << "chunk " << i;
    EXPECT_LE(rows, 100);
    planned += rows;
  }
  EXPECT_EQ(planned, 1000);
  // The dense start was counted finer: no chunk there is far under chunk_rows but the last.
  EXPECT_GE(*plan.chunks[0].planned_rows, 80);
}

TEST_F(ChunkPlanTest, AGridCountedOnSeveralSourcesAtOnceGivesTheSamePlan) {
  const std::string path = path_;
  SourcePool more([path] { return OpenSimSource(path); }, 2);
  const ChunkPlan alone = Plan("dbo_ints", 100);
  const ChunkPlan together = Plan("dbo_ints", 100, {}, 3, &more);
  EXPECT_EQ(Bounds(together.chunks), Bounds(alone.chunks));
  EXPECT_EQ(ChunkPlanDigest(together), ChunkPlanDigest(alone));
  for (std::size_t i = 0; i < alone.chunks.size(); ++i) {
    EXPECT_EQ(together.chunks[i].planned_rows, alone.chunks[i].planned_rows) << "chunk " << i;
  }
  EXPECT_EQ(more.most_open(), 2);  // the grid's ranges were counted on three Sources
}

TEST_F(ChunkPlanTest, OtherKeysGetKeysetBoundsEveryChunkRowsKeys) {
  const ChunkPlan plan = Plan("dbo_pairs", 300);
  EXPECT_EQ(plan.kind, "keyset");
  EXPECT_THAT(plan.keys, ::testing::ElementsAre("a", "b"));
  ASSERT_EQ(plan.chunks.size(), 4u);  // 300 + 300 + 300 + 100
  EXPECT_EQ(plan.chunks.front().lo, json(nullptr));
  EXPECT_EQ(plan.chunks.back().hi, json(nullptr));
  for (std::size_t i = 1; i < plan.chunks.size(); ++i) EXPECT_EQ(plan.chunks[i].lo, plan.chunks[i - 1].hi);
  EXPECT_TRUE(plan.chunks[1].lo.is_array());
}

TEST_F(ChunkPlanTest, AnEmptyTableHasNoChunksAndATableWithoutARangeKeyIsRefused) {
  EXPECT_TRUE(Plan("dbo_empty", 10).chunks.empty());
  EXPECT_THAT([&] { Plan("dbo_ints", 10, {"nope"}); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("'nope' is not captured")));
  EXPECT_THAT([&] { Plan("dbo_floats", 10); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("cannot bound a range")));
  EXPECT_THAT([&] { Plan("dbo_ints", 0); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("chunk_rows must be")));
}

TEST_F(ChunkPlanTest, TheDigestChangesWithAnyBound) {
  ChunkPlan plan = Plan("dbo_ints", 100);
  const std::string digest = ChunkPlanDigest(plan);
  EXPECT_EQ(ChunkPlanDigest(plan), digest);
  plan.chunks[3].hi = plan.chunks[3].hi.get<std::int64_t>() + 1;
  EXPECT_NE(ChunkPlanDigest(plan), digest);
}

SnapshotEvent Event(std::string event, std::string app_id, std::string lsn, json detail,
                    std::int64_t rows = 0) {
  return {std::move(event), std::move(app_id), lsn, lsn, rows, 1000, detail.dump()};
}

TEST(ChunkedStateTest, OpenPlannedAndDoneChunksComeFromTheFactsRows) {
  const std::string s = "0x0000002A000005D0001E";
  std::vector<SnapshotEvent> events = {
      Event("snapshot_open", "a", s, {{"mode", "chunked"}, {"kind", "bootstrap"}, {"generation", 0},
                                       {"plan", {{"kind", "int"}, {"rows", 12}}}}),
      Event("snapshot_open", "other", s, {{"mode", "full"}, {"kind", "bootstrap"}, {"generation", 0}}),
      Event("snapshot_plan", "a", s, {{"snapshot", s}, {"chunks", 5}, {"digest", "d"}}),
      Event("snapshot_chunk", "a", s, {{"snapshot", s}, {"chunk", 0}, {"wave", 0}}, 7),
      Event("snapshot_chunk", "a", s, {{"snapshot", s}, {"chunk", 1}, {"wave", 0}}, 8),
      Event("snapshot_chunk", "a", s, {{"snapshot", s}, {"chunk", 1}, {"wave", 0}}, 8),  // twice
  };
  auto progress = NewestChunked(events, "a");
  ASSERT_TRUE(progress);
  EXPECT_FALSE(progress->opened.complete);
  EXPECT_EQ(progress->opened.rows_estimate, 12);  // the grid of the plan follows it
  EXPECT_TRUE(progress->planned);
  EXPECT_EQ(progress->chunks_total, 5);
  EXPECT_EQ(progress->rows(), 15);
  EXPECT_EQ(progress->last_wave(), 0);
  EXPECT_THAT(NextWaveChunks(5, progress->done(), 2), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(progress->seconds_per_round(2), 1.0);  // one round of 2 chunks in 1000 ms
  EXPECT_FALSE(NewestChunked(events, "other"));
  EXPECT_FALSE(NewestChunked(events, "a.g")) << "not a generation of a";

  // The mode lock: a full start of "a" is refused while its chunked snapshot is open; a
  // chunked start of "other" while its full one is, unless cleanup passed it.
  EXPECT_THAT([&] { CheckModeLock(events, "a", SnapshotMode::kFull, "to_delta"); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("open chunked snapshot")));
  EXPECT_NO_THROW(CheckModeLock(events, "a", SnapshotMode::kChunked, "backfill"));
  EXPECT_THAT([&] { CheckModeLock(events, "other", SnapshotMode::kChunked, "to_delta"); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("open full snapshot")));
  EXPECT_NO_THROW(CheckModeLock(events, "other", SnapshotMode::kChunked, "to_delta",
                                Lsn::ParseLenient("0x0000002B000000000001")));

  // A bootstrap row at S or later closes it.
  events.push_back(Event("bootstrap", "a", s, {{"snapshot", s}}));
  EXPECT_TRUE(NewestChunked(events, "a")->opened.complete);
  EXPECT_NO_THROW(CheckModeLock(events, "a", SnapshotMode::kFull, "to_delta"));
}

TEST(ChunkedStateTest, A0_8_0PlanRowCountsItsChunksInChunkCount) {
  // mssql-cdc-pyspark 0.8.0's snapshot_plan facts row: chunk_count, no digest.
  const std::string s = "0x0000002A000005D0001E";
  const std::vector<SnapshotEvent> events = {
      Event("snapshot_open", "a", s, {{"mode", "chunked"}, {"kind", "bootstrap"}, {"generation", 0}}),
      Event("snapshot_plan", "a", s, {{"snapshot", s}, {"kind", "int"}, {"keys", {"id"}}, {"chunk_rows", 4},
                                      {"chunk_count", 4}}),
      Event("snapshot_chunk", "a", s, {{"snapshot", s}, {"wave", 0}, {"chunk", 0}, {"last", false}}, 4),
  };
  const auto progress = NewestChunked(events, "a");
  ASSERT_TRUE(progress);
  EXPECT_TRUE(progress->planned);
  EXPECT_EQ(progress->chunks_total, 4);
  EXPECT_EQ(progress->plan_digest, "");
  EXPECT_EQ(progress->done(), std::set<int>{0});
}

TEST(ChunkedStateTest, RoundsFollowTheLastWavesPaceWithinTheBudget) {
  EXPECT_EQ(RoundsForWave(std::nullopt, 300, std::nullopt), 1);
  EXPECT_EQ(RoundsForWave(10.0, 300, std::nullopt), 30);
  EXPECT_EQ(RoundsForWave(10.0, 300, 45.0), 4);
  EXPECT_EQ(RoundsForWave(10.0, 0, std::nullopt), 1);
  EXPECT_EQ(RoundsForWave(500.0, 300, std::nullopt), 1);
}

}  // namespace
}  // namespace mssql_cdc
