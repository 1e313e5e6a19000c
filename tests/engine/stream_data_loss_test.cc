// Data loss: cleanup past the checkpoint stops the stream with a DataLossError that names
// what was lost and writes nothing; failOnDataLoss=false records the gap and goes on.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "engine/stream.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;

class StreamDataLossTest : public StreamTest {
 protected:
  // A first run reads two commits (at 00:00:01 and 00:00:02); then commits go on for two
  // hours and cleanup with a 30-minute retention purges everything after the checkpoint but
  // the last half hour.
  void ReadThenPurge() {
    Insert(1);
    Insert(2);
    RunOnce(Config(Options{{"failOnDataLoss", failOnDataLoss ? "true" : "false"}}));
    for (int i = 0; i < 12; ++i) {
      db_->AdvanceClock(10 * kMicrosPerMinute);
      Insert(100 + i);
    }
    const auto result = db_->Cleanup(30);
    ASSERT_GT(result.change_rows_deleted, 0);
  }
  bool failOnDataLoss = true;
};

TEST_F(StreamDataLossTest, CleanupPastTheCheckpointStopsTheStreamAndWritesNothing) {
  ReadThenPurge();
  const std::int64_t bronze_version = delta::DeltaTable::Open(dir_.File("bronze")).state().version;
  const std::int64_t facts_rows = Facts()->num_rows();
  try {
    RunOnce(Config());
    FAIL() << "no DataLossError";
  } catch (const DataLossError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'dbo_items'"), std::string::npos) << message;
    EXPECT_NE(message.find("2026-03-01T00:00:02.000"), std::string::npos) << message;  // last read
    // The watermark: the first commit within 30 minutes of the last one (at 02:00:14).
    const Lsn min_lsn = db_->MinLsn(kInstance);
    EXPECT_NE(message.find(min_lsn.ToString()), std::string::npos) << message;
    EXPECT_NE(message.find("2026-03-01T01:40:12.000"), std::string::npos) << message;
    EXPECT_NE(message.find("failOnDataLoss=false"), std::string::npos) << message;
  }
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("bronze")).state().version, bronze_version);
  EXPECT_EQ(Facts()->num_rows(), facts_rows);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("checkpoint") + "/offsets/1.json"));
  // A rerun fails the same way.
  EXPECT_THROW(RunOnce(Config()), DataLossError);
}

TEST_F(StreamDataLossTest, WithFailOnDataLossFalseTheGapIsRecordedAndTheStreamGoesOn) {
  failOnDataLoss = false;
  ReadThenPurge();
  const Lsn min_lsn = db_->MinLsn(kInstance);
  const StreamProgress progress = RunOnce(Config(Options{{"failOnDataLoss", "false"}}));
  EXPECT_EQ(progress.batches, 1);
  // Bronze holds the first two inserts and everything cleanup left.
  EXPECT_EQ(BronzeChanges().size(), 2 + SourceChanges().size());
  for (const auto& key : SourceChanges()) EXPECT_EQ(BronzeChanges().count(key), 1u);

  auto facts = Facts();
  const auto events = StringColumn(facts, "event");
  const auto details = StringColumn(facts, "detail");
  const auto batch_ids = Int64Column(facts, "batch_id");
  const auto min_lsns = StringColumn(facts, "min_lsn");
  const auto lost_from = Int64Column(facts, "lost_from_ts");
  const auto lost_to = Int64Column(facts, "lost_to_ts");
  int skipped = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] != "data_skipped") continue;
    ++skipped;
    EXPECT_EQ(batch_ids[i], 1);
    EXPECT_EQ(min_lsns[i], min_lsn.ToString());
    EXPECT_EQ(lost_from[i], stream_testing::At("2026-03-01 00:00:02").value);
    EXPECT_EQ(lost_to[i], stream_testing::At("2026-03-01 01:40:12").value);
    auto detail = nlohmann::json::parse(*details[i]);
    EXPECT_EQ(detail["to"], min_lsn.ToString());
    EXPECT_EQ(detail["certain"], true);
    EXPECT_TRUE(detail.contains("from"));
  }
  EXPECT_EQ(skipped, 1);

  // Later changes arrive as usual.
  Insert(500);
  EXPECT_EQ(RunOnce(Config(Options{{"failOnDataLoss", "false"}})).total_rows, 1);
}

}  // namespace
}  // namespace mssql_cdc
