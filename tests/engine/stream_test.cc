// A stream end to end over a simulated database: availableNow runs, reruns, batch sizes,
// parallel ranges, bootstrap, data loss, the facts rows, checkpoint identity and the verdict.
#include "engine/stream.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "engine/finalization.h"
#include "engine/table_schemas.h"
#include "source/output_schema.h"
#include "source/sim/sim_source.h"
#include "tests/testing/stream_test_util.h"
#include "tests/testing/test_backend.h"

namespace mssql_cdc {
namespace {

using stream_testing::At;
using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;
using testing::TestsReadThroughOdbc;

// The micro-batch facts rows (event NULL), ordered by batch id.
std::vector<std::int64_t> BatchRowCounts(const std::shared_ptr<arrow::Table>& facts) {
  const auto events = StringColumn(facts, "event");
  const auto batch_ids = Int64Column(facts, "batch_id");
  const auto rows = Int64Column(facts, "rows");
  std::map<std::int64_t, std::int64_t> by_batch;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!events[i]) {
      EXPECT_EQ(by_batch.count(batch_ids[i]), 0u) << "two facts rows for batch " << batch_ids[i];
      by_batch[batch_ids[i]] = rows[i];
    }
  }
  std::vector<std::int64_t> out;
  for (const auto& [id, n] : by_batch) out.push_back(n);
  return out;
}

std::int64_t BronzeVersion(const std::string& uri) {
  return delta::DeltaTable::Open(uri).state().version;
}

TEST_F(StreamTest, AvailableNowReadsEveryChangeOnce) {
  Insert(1, 5);
  Update(2, 40);
  Delete(3);
  Insert(6, 3);
  Update(6, 1);
  const StreamProgress progress = RunOnce(Config());
  EXPECT_TRUE(progress.caught_up);
  EXPECT_EQ(progress.total_rows, 13);  // 8 inserts, 2 updates as two images each, 1 delete
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  EXPECT_EQ(BronzeOperationCounts(), db_->OperationCounts(kInstance));
  ASSERT_TRUE(progress.end);
  EXPECT_EQ(progress.end->lsn, *db_->MaxLsn());
  // Change rows carry their batch id; snapshot columns stay NULL.
  auto bronze = Bronze();
  EXPECT_EQ(bronze->GetColumnByName("_batch_id")->null_count(), 0);
  EXPECT_EQ(bronze->GetColumnByName("_snapshot")->null_count(), bronze->num_rows());
  EXPECT_EQ(bronze->GetColumnByName("_chunk")->null_count(), bronze->num_rows());
  EXPECT_EQ(Int64Column(bronze, "_batch_id"), std::vector<std::int64_t>(13, 0));
}

TEST_F(StreamTest, SecondRunReadsNothingNewThenPicksUpNewChanges) {
  Insert(1, 4);
  RunOnce(Config());
  const std::int64_t version = BronzeVersion(dir_.File("bronze"));
  const StreamProgress idle = RunOnce(Config());
  EXPECT_EQ(idle.batches, 0);
  EXPECT_EQ(idle.total_rows, 0);
  EXPECT_TRUE(idle.caught_up);
  EXPECT_EQ(BronzeVersion(dir_.File("bronze")), version);
  EXPECT_EQ(BronzeChanges(), SourceChanges());

  Update(1, 9);
  Insert(10, 2);
  const StreamProgress more = RunOnce(Config());
  EXPECT_EQ(more.total_rows, 4);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  EXPECT_EQ(Bronze()->num_rows(), 8);
}

TEST_F(StreamTest, MaxCommitsPerBatchBoundsEveryBatch) {
  const Lsn enabled = db_->MinLsn(kInstance);
  for (int i = 1; i <= 10; ++i) Insert(i);
  // Start after the enabling commit, so only the ten inserts count.
  const StreamProgress progress = RunOnce(
      Config(Options{{"maxCommitsPerBatch", "3"}, {"startingLsn", enabled.ToString()}}));
  EXPECT_EQ(progress.batches, 4);
  EXPECT_EQ(BatchRowCounts(Facts()), (std::vector<std::int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, TwoPartitionsOnALargeBacklogGiveTheSameBronze) {
  for (int commit = 0; commit < 20; ++commit) Insert(commit * 10'000 + 1, 10'000);
  for (int i = 1; i <= 500; ++i) Update(i * 3, i);
  const StreamProgress progress = RunOnce(Config(Options{{"numPartitions", "2"}}));
  EXPECT_EQ(progress.total_rows, 201'000);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  EXPECT_EQ(BronzeOperationCounts(), db_->OperationCounts(kInstance));
}

TEST_F(StreamTest, FactsRowHoldsWhatTheBatchDid) {
  Insert(1, 3);
  Update(1, 5);
  const Lsn last = Delete(2);
  const UtcMicros before = NowUtc();
  RunOnce(Config());
  auto facts = Facts();
  ASSERT_EQ(facts->num_rows(), 1);
  EXPECT_EQ(Int64Column(facts, "batch_id"), std::vector<std::int64_t>{0});
  EXPECT_EQ(Int64Column(facts, "rows"), std::vector<std::int64_t>{6});
  EXPECT_EQ(Int64Column(facts, "inserts"), std::vector<std::int64_t>{3});
  EXPECT_EQ(Int64Column(facts, "updates"), std::vector<std::int64_t>{1});
  EXPECT_EQ(Int64Column(facts, "deletes"), std::vector<std::int64_t>{1});
  const auto changes = db_->ChangeRows(kInstance);
  EXPECT_EQ(StringColumn(facts, "min_lsn")[0], changes.front().start_lsn.ToString());
  EXPECT_EQ(StringColumn(facts, "max_lsn")[0], last.ToString());
  EXPECT_EQ(StringColumn(facts, "end_lsn")[0], last.ToString());
  EXPECT_EQ(StringColumn(facts, "target")[0], dir_.File("bronze"));
  EXPECT_EQ(StringColumn(facts, "app_id")[0], "app");
  EXPECT_FALSE(StringColumn(facts, "event")[0]);
  // Commits were one second apart from 00:00:01 (the enabling commit is at 00:00:00).
  EXPECT_EQ(Int64Column(facts, "min_commit_ts")[0], At("2026-03-01 00:00:01").value);
  EXPECT_EQ(Int64Column(facts, "max_commit_ts")[0], At("2026-03-01 00:00:03").value);
  EXPECT_EQ(Int64Column(facts, "end_commit_ts")[0], At("2026-03-01 00:00:03").value);
  EXPECT_EQ(Int64Column(facts, "source_max_commit_ts")[0], At("2026-03-01 00:00:03").value);
  EXPECT_EQ(Int64Column(facts, "retention_watermark_ts")[0], At("2026-03-01 00:00:00").value);
  auto doubles = [&](const char* name) {
    auto column = facts->GetColumnByName(name)->chunk(0);
    auto typed = std::static_pointer_cast<arrow::DoubleArray>(column);
    return typed->IsNull(0) ? std::optional<double>() : typed->Value(0);
  };
  EXPECT_NEAR(*doubles("retention_headroom_hours"), 3.0 / 3600, 1e-9);
  EXPECT_NEAR(*doubles("ingestion_lag_seconds"), 0.0, 1e-9);
  EXPECT_GT(*doubles("capture_lag_seconds"), 0.0);  // the sim's clock is in the past
  EXPECT_GE(*doubles("read_seconds"), 0.0);
  EXPECT_GT(*doubles("read_mb"), 0.0);
  // A round trip is timed where there is a server to reach: through odbc, not on the sim file.
  if (TestsReadThroughOdbc()) {
    EXPECT_GT(*doubles("source_rtt_ms"), 0.0);
  } else {
    EXPECT_FALSE(doubles("source_rtt_ms"));
  }
  // The wait on the network is the engine's TDS reader's own measure: NULL where the sim file or
  // an ODBC driver read the change rows.
  const bool own_reader = TestsReadThroughOdbc() && testing::ChangeReaderUnderTest() != "driver";
  EXPECT_EQ(facts->GetColumnByName("network_wait_ms")->chunk(0)->IsValid(0), own_reader);
  // And the row says which reader read the batch.
  const auto detail = StringColumn(facts, "detail")[0];
  if (!TestsReadThroughOdbc()) {
    EXPECT_FALSE(detail.has_value());
  } else {
    const std::string reader = own_reader ? (testing::TlsUnderTest() ? "tds+tls" : "tds") : "driver";
    EXPECT_EQ(detail.value_or(""), "{\"readers\":[\"" + reader + "\"]}");
  }
  EXPECT_GE(Int64Column(facts, "started_at")[0], before.value);
  EXPECT_GE(Int64Column(facts, "written_at")[0], Int64Column(facts, "started_at")[0]);
  EXPECT_GE(Int64Column(facts, "duration_ms")[0], 0);

  // The bronze commit's userMetadata describes the batch.
  std::ifstream commit(dir_.File("bronze") + "/_delta_log/00000000000000000001.json");
  std::string line;
  std::optional<nlohmann::json> metadata;
  while (std::getline(commit, line)) {
    auto action = nlohmann::json::parse(line);
    if (action.contains("commitInfo")) {
      metadata = nlohmann::json::parse(action["commitInfo"]["userMetadata"].get<std::string>());
    }
  }
  ASSERT_TRUE(metadata);
  EXPECT_EQ((*metadata)["rows"], 6);
  EXPECT_EQ((*metadata)["batch_id"], 0);
  EXPECT_EQ((*metadata)["app_id"], "app");
  EXPECT_EQ((*metadata)["max_lsn"], last.ToString());
}

TEST_F(StreamTest, CheckpointOfAnotherAppIdOrTargetIsRefused) {
  Insert(1);
  RunOnce(Config());
  Stream other_app(Config({}, "another"), nullptr);
  try {
    other_app.Start();
    FAIL() << "started on another app's checkpoint";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("app_id 'app'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("new app_id"), std::string::npos) << e.what();
  }
  StreamConfig other_target = Config();
  other_target.params.target = dir_.File("elsewhere");
  EXPECT_THROW(RunOnce(other_target), ConfigError);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, BootstrapWithStartingLsnIsRefused) {
  StreamConfig config = Config(Options{{"startingLsn", "latest"}});
  config.params.bootstrap = true;
  EXPECT_THROW(Stream(config, nullptr), ConfigError);
}

TEST_F(StreamTest, VerdictMovesAfterEachBatchAndNeverBeforeItsData) {
  const Lsn enabled = db_->MinLsn(kInstance);
  for (int i = 1; i <= 4; ++i) {
    db_->AdvanceClock(2 * kMicrosPerMinute);
    Insert(i);
  }
  StreamConfig config =
      Config(Options{{"maxCommitsPerBatch", "1"}, {"startingLsn", enabled.ToString()}});
  const std::string control = dir_.File("control");
  config.control_table = control;
  config.tracked_table = "dbo.items";
  config.granularity = Granularity::kMinute;
  std::map<std::int64_t, std::optional<std::string>> verdict_before_commit;
  config.step_hook = [&](BatchStep step, std::int64_t batch_id) {
    // Until a batch is committed the verdict must not name its end.
    if (step == BatchStep::kCommitted) {
      auto verdict = ReadVerdict(control, "dbo.items");
      verdict_before_commit[batch_id] =
          verdict ? std::optional<std::string>(verdict->end_lsn) : std::nullopt;
    }
  };
  const StreamProgress progress = RunOnce(config);
  ASSERT_EQ(progress.batches, 4);
  const auto changes = db_->ChangeRows(kInstance);
  for (std::int64_t b = 0; b < 4; ++b) {
    const std::string end = changes[b].start_lsn.ToString();
    if (verdict_before_commit[b]) {
      EXPECT_LT(*verdict_before_commit[b], end) << b;
    }
    if (b > 0) {
      EXPECT_EQ(verdict_before_commit[b], changes[b - 1].start_lsn.ToString()) << b;
    }
  }
  auto verdict = ReadVerdict(control, "dbo.items");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->end_lsn, progress.end->lsn.ToString());
  EXPECT_EQ(verdict->finalized_until, Truncate(*progress.end->commit_ts, Granularity::kMinute));
}

TEST_F(StreamTest, DefaultTriggerFollowsNewChangesUntilStopped) {
  Insert(1, 2);
  StreamConfig config = Config();
  config.params.trigger = Trigger::Default();
  Stream stream(config, nullptr);
  stream.Start();
  EXPECT_TRUE(stream.active());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (stream.progress().total_rows < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Insert(5, 3);
  while (stream.progress().total_rows < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(stream.progress().total_rows, 5);
  EXPECT_FALSE(stream.Await(std::chrono::milliseconds(50)));  // still running
  stream.Stop();
  EXPECT_TRUE(stream.Await(std::chrono::seconds(10)));
  EXPECT_FALSE(stream.active());
  EXPECT_FALSE(stream.error());
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, ProcessingTimeRunsABatchPerInterval) {
  Insert(1, 2);
  StreamConfig config = Config();
  config.params.trigger = Trigger::ProcessingTime(std::chrono::milliseconds(200));
  Stream stream(config, nullptr);
  stream.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (stream.progress().total_rows < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Insert(3);
  while (stream.progress().total_rows < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stream.Stop();
  ASSERT_TRUE(stream.Await(std::chrono::seconds(10)));
  EXPECT_EQ(stream.progress().batches, 2);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, ExistingBronzeWithFewerColumnsGainsTheNewOnes) {
  auto columns = OpenSimSource(db_->path())->CapturedColumns(kInstance);
  ASSERT_EQ(columns.back().name, "qty");
  columns.pop_back();
  delta::DeltaTable::Create(dir_.File("bronze"),
                            BronzeTableOptions(OutputSchema(columns, true), kInstance));
  Insert(1, 3);
  RunOnce(Config());
  auto bronze = Bronze();
  ASSERT_TRUE(bronze->schema()->GetFieldByName("qty"));
  EXPECT_EQ(bronze->schema()->field(bronze->num_columns() - 1)->name(), "qty");  // appended
  EXPECT_EQ(Int64Column(bronze, "qty"), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, UnknownCaptureInstanceFailsTheStart) {
  StreamConfig config = Config();
  config.source.capture_instance = "dbo_nothing";
  Stream stream(config, nullptr);
  EXPECT_THROW(stream.Start(), NotFoundError);
  EXPECT_FALSE(stream.active());
  EXPECT_TRUE(stream.error());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("bronze")));
}

}  // namespace
}  // namespace mssql_cdc
