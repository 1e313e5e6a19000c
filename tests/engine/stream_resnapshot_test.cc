// on_data_loss="resnapshot": a stream whose next changes cleanup purged snapshots the table
// again (full or chunked) and goes on as generation n+1, with the lost interval in the facts;
// a second loss within resnapshot_interval_days is a DataLossError; every refusal before
// anything is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "engine/generations.h"
#include "engine/stream.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::At;
using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;

class StreamResnapshotTest : public StreamTest, public ::testing::WithParamInterface<const char*> {
 protected:
  StreamConfig Resnapshot(const Options& extra = {}) const {
    StreamConfig config = Config(extra);
    config.params.on_data_loss = OnDataLoss::kResnapshot;
    config.params.snapshot = ParseSnapshotMode(GetParam());
    config.backfill.chunk_rows = 5;
    return config;
  }

  // Changes for two hours after the last read, then cleanup keeps the last half hour.
  void ChangeThenPurge(int first) {
    for (int i = 0; i < 12; ++i) {
      db_->AdvanceClock(10 * kMicrosPerMinute);
      Insert(first + i);
      table_[first + i] = (first + i) % 7;
      Update(first, i);
      table_[first] = i;
    }
    Delete(first + 1);
    table_.erase(first + 1);
    ASSERT_GT(db_->Cleanup(30).change_rows_deleted, 0);
  }

  // The latest image per key of bronze: id -> qty.
  std::map<std::int64_t, std::int64_t> LatestImages() const {
    auto bronze = Bronze();
    const auto ids = Int64Column(bronze, "id");
    const auto qty = Int64Column(bronze, "qty");
    const auto lsn = StringColumn(bronze, "_start_lsn");
    const auto seq = StringColumn(bronze, "_seqval");
    const auto op = Int64Column(bronze, "_operation");
    using Order = std::tuple<std::optional<std::string>, std::optional<std::string>, std::int64_t, std::int64_t>;
    std::map<std::int64_t, Order> latest;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (op[i] == 3) continue;
      auto order = std::make_tuple(lsn[i], seq[i], op[i], qty[i]);
      auto it = latest.find(ids[i]);
      if (it == latest.end() || std::tie(std::get<0>(order), std::get<1>(order), std::get<2>(order)) >
                                    std::tie(std::get<0>(it->second), std::get<1>(it->second), std::get<2>(it->second))) {
        latest[ids[i]] = order;
      }
    }
    std::map<std::int64_t, std::int64_t> images;
    for (const auto& [id, row] : latest) {
      if (std::get<2>(row) != 1) images[id] = std::get<3>(row);
    }
    return images;
  }

  std::vector<std::string> Events(const std::string& app_id) const {
    auto facts = Facts();
    const auto events = StringColumn(facts, "event");
    const auto apps = StringColumn(facts, "app_id");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (apps[i] == app_id && events[i]) out.push_back(*events[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::map<std::int64_t, std::int64_t> table_;
};

TEST_P(StreamResnapshotTest, APurgedStreamSnapshotsAgainAndGoesOnAsTheNextGeneration) {
  Insert(1, 3);
  for (int id = 1; id <= 3; ++id) table_[id] = id % 7;
  RunOnce(Resnapshot());
  ChangeThenPurge(100);

  RunOnce(Resnapshot());
  const std::string base = dir_.File("checkpoint");
  const auto state = GenerationState::Read(base);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->generation, 1);
  EXPECT_FALSE(state->recovering);
  ASSERT_TRUE(state->snapshot);
  EXPECT_TRUE(std::filesystem::exists(base + "/_generations/1/start.json"));
  // The table again in bronze, and the lost interval in the facts.
  EXPECT_EQ(LatestImages(), table_);
  const bool chunked = std::string(GetParam()) == "chunked";
  const std::vector<std::string> events_of_g1 = Events("app.g1");
  EXPECT_EQ(std::count(events_of_g1.begin(), events_of_g1.end(), "resnapshot"), 1);
  EXPECT_EQ(std::count(events_of_g1.begin(), events_of_g1.end(), "snapshot_open"), 1);
  EXPECT_EQ(std::count(events_of_g1.begin(), events_of_g1.end(), "snapshot_plan"), chunked ? 1 : 0);
  EXPECT_EQ(std::count(events_of_g1.begin(), events_of_g1.end(), "snapshot_chunk") > 1, chunked);
  auto facts = Facts();
  const auto events = StringColumn(facts, "event");
  const auto lost_from = Int64Column(facts, "lost_from_ts");
  const auto lost_to = Int64Column(facts, "lost_to_ts");
  const auto details = StringColumn(facts, "detail");
  bool open_seen = false;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] != "snapshot_open" || details[i]->find("resnapshot") == std::string::npos) continue;
    open_seen = true;
    const auto detail = nlohmann::json::parse(*details[i]);
    EXPECT_EQ(detail["generation"], 1);
    EXPECT_EQ(detail["mode"], GetParam());
    EXPECT_EQ(lost_from[i], At("2026-03-01 00:00:01").value);  // the last commit read
    EXPECT_GT(lost_to[i], lost_from[i]);
  }
  EXPECT_TRUE(open_seen);
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] == "resnapshot") EXPECT_EQ(lost_from[i], At("2026-03-01 00:00:01").value);
  }

  // Generation 1 goes on: new changes once, no second re-snapshot.
  Update(2, 6);
  table_[2] = 6;
  RunOnce(Resnapshot());
  EXPECT_EQ(GenerationState::Read(base)->generation, 1);
  EXPECT_EQ(LatestImages(), table_);

  // A second loss within the interval: refused, nothing written; with interval 0, generation 2.
  ChangeThenPurge(200);
  const auto bronze_version = delta::DeltaTable::Open(dir_.File("bronze")).state().version;
  EXPECT_THAT([&] { RunOnce(Resnapshot()); },
              ::testing::ThrowsMessage<DataLossError>(::testing::HasSubstr("resnapshot_interval_days")));
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("bronze")).state().version, bronze_version);
  StreamConfig now = Resnapshot();
  now.params.resnapshot_interval_days = 0;
  RunOnce(now);
  EXPECT_EQ(GenerationState::Read(base)->generation, 2);
  EXPECT_EQ(LatestImages(), table_);
}

TEST_P(StreamResnapshotTest, ResnapshotIsRefusedWithoutAFactsTableOrWithFailOnDataLossOff) {
  StreamConfig no_facts = Resnapshot();
  no_facts.params.facts_table.reset();
  EXPECT_THROW(Stream(no_facts, nullptr), ConfigError);
  EXPECT_THROW(Stream(Resnapshot(Options{{"failOnDataLoss", "false"}}), nullptr), ConfigError);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("checkpoint")));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("bronze")));
}

INSTANTIATE_TEST_SUITE_P(StreamResnapshot, StreamResnapshotTest, ::testing::Values("full", "chunked"));

}  // namespace
}  // namespace mssql_cdc
