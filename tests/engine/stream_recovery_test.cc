// Exactly once across crashes: a stream stopped dead after any step of a batch restarts from
// its checkpoint and ends with bronze equal to the change table, no duplicate and no gap, and
// one facts row per batch.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "engine/stream.h"
#include "engine/stream_checkpoint.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;

struct Crash : std::runtime_error {
  Crash() : std::runtime_error("simulated crash") {}
};

class StreamRecoveryTest : public StreamTest,
                           public ::testing::WithParamInterface<BatchStep> {
 protected:
  StreamConfig SmallBatches() { return Config(Options{{"maxCommitsPerBatch", "2"}}); }

  // Every micro-batch facts row's batch id, and that none repeats.
  std::vector<std::int64_t> FactsBatchIds() {
    auto facts = Facts();
    const auto events = StringColumn(facts, "event");
    const auto ids = Int64Column(facts, "batch_id");
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!events[i]) out.push_back(ids[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static std::vector<std::int64_t> Iota(std::int64_t n) {
    std::vector<std::int64_t> out(n);
    for (std::int64_t i = 0; i < n; ++i) out[i] = i;
    return out;
  }
};

TEST_P(StreamRecoveryTest, CrashAfterAStepThenRestartGivesExactlyTheChangeTable) {
  for (int i = 1; i <= 6; ++i) Insert(i * 10, 3);
  Update(20, 50);
  Delete(50);
  // 9 commits after the enabling one: batches of 2 commits -> batches 0..4.
  StreamConfig crashing = SmallBatches();
  const BatchStep crash_step = GetParam();
  crashing.step_hook = [&](BatchStep step, std::int64_t batch_id) {
    if (batch_id == 2 && step == crash_step) throw Crash();
  };
  EXPECT_THROW(RunOnce(crashing), Crash);
  const StreamProgress after = RunOnce(SmallBatches());
  EXPECT_TRUE(after.caught_up);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  EXPECT_EQ(BronzeOperationCounts(), db_->OperationCounts(kInstance));
  EXPECT_EQ(FactsBatchIds(), Iota(5));
  StreamCheckpoint checkpoint(dir_.File("checkpoint"));
  for (int b = 0; b < 5; ++b) EXPECT_TRUE(checkpoint.ReadCommit(b)) << b;
}

INSTANTIATE_TEST_SUITE_P(StreamAfterEveryStep, StreamRecoveryTest,
                         ::testing::Values(BatchStep::kOffsetsWritten,
                                           BatchStep::kBronzeAppended,
                                           BatchStep::kFactsAppended, BatchStep::kCommitted));

TEST_F(StreamTest, ABatchFinishedFromBronzeReportsWhatAnUninterruptedBatchReports) {
  for (int i = 1; i <= 4; ++i) Insert(i * 10, 3);
  Update(20, 5);
  Delete(40);
  StreamConfig crashing = Config(Options{{"maxCommitsPerBatch", "3"}});
  crashing.step_hook = [&](BatchStep step, std::int64_t batch_id) {
    if (batch_id == 1 && step == BatchStep::kBronzeAppended) throw Crash();
  };
  EXPECT_THROW(RunOnce(crashing), Crash);
  RunOnce(Config(Options{{"maxCommitsPerBatch", "3"}}));
  // The facts row of batch 1 came from bronze's files, not from a read: it must say what
  // bronze's rows of that batch say, to the microsecond.
  auto facts = Facts();
  auto bronze = Bronze();
  const auto batch_ids = Int64Column(bronze, "_batch_id");
  const auto lsns = StringColumn(bronze, "_start_lsn");
  const auto ops = Int64Column(bronze, "_operation");
  std::int64_t rows = 0, updates = 0, deletes = 0;
  std::string min_lsn = "~", max_lsn;
  for (std::size_t i = 0; i < batch_ids.size(); ++i) {
    if (batch_ids[i] != 1) continue;
    ++rows;
    updates += ops[i] == 4;
    deletes += ops[i] == 1;
    min_lsn = std::min(min_lsn, *lsns[i]);
    max_lsn = std::max(max_lsn, *lsns[i]);
  }
  const auto fact_ids = Int64Column(facts, "batch_id");
  const auto events = StringColumn(facts, "event");
  bool found = false;
  for (std::size_t i = 0; i < fact_ids.size(); ++i) {
    if (fact_ids[i] != 1 || events[i]) continue;
    found = true;
    EXPECT_EQ(Int64Column(facts, "rows")[i], rows);
    EXPECT_EQ(Int64Column(facts, "updates")[i], updates);
    EXPECT_EQ(Int64Column(facts, "deletes")[i], deletes);
    EXPECT_EQ(*StringColumn(facts, "min_lsn")[i], min_lsn);
    EXPECT_EQ(*StringColumn(facts, "max_lsn")[i], max_lsn);
  }
  EXPECT_TRUE(found);
  EXPECT_GT(rows, 0);
  EXPECT_GT(updates + deletes, 0);
}

TEST_F(StreamTest, ReplayedBatchKeepsItsPlannedRange) {
  for (int i = 1; i <= 3; ++i) Insert(i);
  StreamConfig crashing = Config();
  crashing.step_hook = [](BatchStep step, std::int64_t) {
    if (step == BatchStep::kOffsetsWritten) throw std::runtime_error("crash");
  };
  EXPECT_THROW(RunOnce(crashing), std::runtime_error);
  StreamCheckpoint checkpoint(dir_.File("checkpoint"));
  const BatchOffsets planned = *checkpoint.ReadOffsets(0);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("bronze") + "/_delta_log/00000000000000000001.json"));
  Insert(10, 2);  // committed after the plan: belongs to the next batch
  const StreamProgress progress = RunOnce(Config());
  EXPECT_EQ(progress.batches, 2);
  EXPECT_EQ(checkpoint.ReadOffsets(0)->end, planned.end);
  EXPECT_EQ(checkpoint.ReadCommit(0)->rows, 3);
  EXPECT_EQ(checkpoint.ReadCommit(1)->rows, 2);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, CrashesAtRandomStepsNeverDuplicateOrLoseARow) {
  std::mt19937 random(7);
  for (int i = 1; i <= 40; ++i) {
    if (i % 5 == 0) {
      Update((i - 1) * 10, i);
    } else {
      Insert(i * 10, 1 + i % 3);
    }
  }
  int crashes = 0;
  for (int run = 0; run < 60; ++run) {
    StreamConfig config = Config(Options{{"maxCommitsPerBatch", "3"}});
    const int countdown_start = std::uniform_int_distribution<int>(0, 8)(random);
    int countdown = countdown_start;
    config.step_hook = [&](BatchStep, std::int64_t) {
      if (countdown-- == 0) throw std::runtime_error("crash");
    };
    try {
      if (RunOnce(config).caught_up && run > 0) break;
    } catch (const std::runtime_error&) {
      ++crashes;
    }
    if (run % 10 == 9) Insert(10'000 + run);  // new changes between restarts
  }
  RunOnce(Config(Options{{"maxCommitsPerBatch", "3"}}));
  EXPECT_GT(crashes, 5);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  auto facts = Facts();
  const auto events = StringColumn(facts, "event");
  const auto ids = Int64Column(facts, "batch_id");
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!events[i]) {
      EXPECT_TRUE(seen.insert(ids[i]).second) << "batch " << ids[i] << " twice";
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), *seen.rbegin() + 1);  // no gap
}

}  // namespace
}  // namespace mssql_cdc
