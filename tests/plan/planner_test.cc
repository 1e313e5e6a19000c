#include "plan/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "tests/testing/temp_dir.h"
#include "core/errors.h"
#include "core/timezone.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "source/sim/sim_source.h"
#include "source/source.h"

namespace mssql_cdc {
namespace {

using testing::TempDir;

constexpr const char* kInstance = "dbo_items";

UtcMicros At(const char* text) { return UtcMicros{*ParseDateTime(text)}; }

// A sim database with one CDC table on a manual clock that moves a second per commit, so
// every commit has its own time.
class SimCdcDatabase {
 public:
  explicit SimCdcDatabase(const std::string& path, const std::string& time_zone = "UTC",
                          UtcMicros start = At("2026-01-15 12:00:00")) {
    sim::CreateOptions options;
    options.time_zone = time_zone;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = start;
    db_ = sim::SimDatabase::Create(path, options);
    sim::TableDef table;
    table.name = items_;
    table.columns = {sim::ParseColumnDeclaration("id int not null"),
                     sim::ParseColumnDeclaration("v int")};
    table.primary_key = {"id"};
    db_->CreateTable(table);
    db_->EnableCdc(items_);
    enable_lsn_ = db_->MinLsn(kInstance);
  }

  // One commit inserting `rows` rows; returns its LSN.
  Lsn Commit(int rows = 1) {
    db_->AdvanceClock(kMicrosPerSecond);
    std::vector<sim::Row> batch;
    batch.reserve(static_cast<std::size_t>(rows));
    for (int i = 0; i < rows; ++i) {
      batch.push_back({{"id", next_id_}, {"v", next_id_}});
      ++next_id_;
    }
    auto txn = db_->Begin();
    txn->InsertMany(items_, std::move(batch));
    return *txn->Commit().commit_lsn;
  }

  Lsn Idle() {
    db_->AdvanceClock(kMicrosPerSecond);
    return db_->WriteIdleEntry();
  }

  sim::SimDatabase& db() { return *db_; }
  const Lsn& enable_lsn() const { return enable_lsn_; }
  std::string path() const { return db_->path(); }

 private:
  sim::TableName items_ = sim::ParseTableName("dbo.items");
  std::unique_ptr<sim::SimDatabase> db_;
  Lsn enable_lsn_;
  int next_id_ = 1;
};

// ---- PlanEnd ----

class PlanEndTest : public ::testing::Test {
 protected:
  // Plans batches from the enable LSN up to `target` until none is left; returns the ends.
  std::vector<Lsn> PlanAll(Source& source, const Lsn& target,
                           std::optional<std::int64_t> max_commits) {
    std::vector<Lsn> ends;
    Offset start{db_.enable_lsn(), std::nullopt};
    while (auto end = BatchPlanner::PlanEnd(source, SourceClock::Utc(), start, target,
                                            max_commits)) {
      ends.push_back(end->lsn);
      start = *end;
      if (ends.size() > 100) break;  // a planner that never stops fails below, not here
    }
    return ends;
  }

  TempDir dir_;
  SimCdcDatabase db_{dir_.File("sim.db")};
};

TEST_F(PlanEndTest, MaxCommitsGivesBatchesOfThreeThreeThreeOne) {
  std::vector<Lsn> commits;
  for (int i = 0; i < 10; ++i) commits.push_back(db_.Commit());
  auto source = OpenSimSource(db_.path());

  const std::vector<Lsn> ends = PlanAll(*source, *source->MaxLsn(), 3);
  EXPECT_EQ(ends, (std::vector<Lsn>{commits[2], commits[5], commits[8], commits[9]}));

  // Commits per batch, as the reference's t5 check counts them.
  std::vector<std::size_t> sizes;
  std::size_t previous = 0;
  for (const Lsn& end : ends) {
    const auto position =
        static_cast<std::size_t>(std::find(commits.begin(), commits.end(), end) - commits.begin());
    sizes.push_back(position + 1 - previous);
    previous = position + 1;
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 3, 3, 1}));
}

TEST_F(PlanEndTest, IdleEntriesCountAsCommits) {
  const Lsn first = db_.Commit();
  const Lsn idle1 = db_.Idle();
  db_.Idle();
  const Lsn second = db_.Commit();
  const Lsn idle3 = db_.Idle();
  ASSERT_LT(first, idle1);
  auto source = OpenSimSource(db_.path());

  EXPECT_EQ(PlanAll(*source, *source->MaxLsn(), 2), (std::vector<Lsn>{idle1, second, idle3}));
}

TEST_F(PlanEndTest, WithoutMaxCommitsEndsAtTarget) {
  for (int i = 0; i < 5; ++i) db_.Commit();
  auto source = OpenSimSource(db_.path());
  const Lsn max = *source->MaxLsn();

  auto end = BatchPlanner::PlanEnd(*source, SourceClock::Utc(), Offset{db_.enable_lsn(), {}},
                                   max, std::nullopt);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->lsn, max);
}

TEST_F(PlanEndTest, EndIsNeverPastTarget) {
  std::vector<Lsn> commits;
  for (int i = 0; i < 10; ++i) commits.push_back(db_.Commit());
  auto source = OpenSimSource(db_.path());

  // An availableNow target at the 4th commit stops batches of 3 there, though more follow.
  EXPECT_EQ(PlanAll(*source, commits[3], 3), (std::vector<Lsn>{commits[2], commits[3]}));
  EXPECT_EQ(PlanAll(*source, commits[3], 100), (std::vector<Lsn>{commits[3]}));
}

TEST_F(PlanEndTest, NothingAfterStartPlansNoBatch) {
  const Lsn last = db_.Commit();
  auto source = OpenSimSource(db_.path());
  const Offset start{last, std::nullopt};

  EXPECT_FALSE(BatchPlanner::PlanEnd(*source, SourceClock::Utc(), start, last, std::nullopt));
  EXPECT_FALSE(BatchPlanner::PlanEnd(*source, SourceClock::Utc(), start, last, 3));

  // Commits after start but a target at or before it (a stale max LSN): still nothing.
  db_.Commit();
  EXPECT_FALSE(BatchPlanner::PlanEnd(*source, SourceClock::Utc(), start, last, 3));
  EXPECT_FALSE(
      BatchPlanner::PlanEnd(*source, SourceClock::Utc(), start, db_.enable_lsn(), std::nullopt));
}

TEST_F(PlanEndTest, MaxCommitsBelowOneIsAConfigError) {
  db_.Commit();
  auto source = OpenSimSource(db_.path());
  EXPECT_THROW(BatchPlanner::PlanEnd(*source, SourceClock::Utc(), Offset{db_.enable_lsn(), {}},
                                     *source->MaxLsn(), 0),
               ConfigError);
}

TEST(PlanEndTime, CommitTimeIsUtcWithANonUtcServerZone) {
  TempDir dir;
  // 12:00:00 UTC is 04:00:00 in Pacific Standard Time (UTC-8 in January).
  SimCdcDatabase db(dir.File("sim.db"), "Pacific Standard Time", At("2026-01-15 12:00:00"));
  const Lsn commit = db.Commit();  // the clock moves a second first: 12:00:01 UTC
  ASSERT_EQ(db.db().LsnTimeMapping().back().tran_end_time, "2026-01-15 04:00:01.000");
  auto source = OpenSimSource(db.path());
  const SourceClock clock = SourceClock::ForWindowsZone(source->ServerTimeZone());

  auto end = BatchPlanner::PlanEnd(*source, clock, Offset{db.enable_lsn(), {}}, commit,
                                   std::nullopt);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->lsn, commit);
  ASSERT_TRUE(end->commit_ts);
  EXPECT_EQ(FormatIsoMillis(end->commit_ts->value), "2026-01-15T12:00:01.000");
}

TEST(PlanEndTime, CommitInTheRepeatedHourConvertsAsItsFirstReading) {
  TempDir dir;
  // 2025-11-02 09:30 UTC is 01:30 PST, the second pass of the hour repeated after 02:00 PDT
  // fell back to 01:00 PST. One lookup cannot tell it from 01:30 PDT (08:30 UTC), the
  // documented choice: the earlier instant.
  SimCdcDatabase db(dir.File("sim.db"), "Pacific Standard Time", At("2025-11-02 09:29:59"));
  const Lsn commit = db.Commit();
  ASSERT_EQ(db.db().LsnTimeMapping().back().tran_end_time, "2025-11-02 01:30:00.000");
  auto source = OpenSimSource(db.path());
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");

  auto end = BatchPlanner::PlanEnd(*source, clock, Offset{db.enable_lsn(), {}}, commit,
                                   std::nullopt);
  ASSERT_TRUE(end && end->commit_ts);
  EXPECT_EQ(FormatIsoMillis(end->commit_ts->value), "2025-11-02T08:30:00.000");
}

// ---- Split ----

// Exact change rows per range, counted from the change table (the split's counts come from
// NTILE tiles and may be off by a straddling commit).
std::vector<std::int64_t> RowsRead(sim::SimDatabase& db, const std::vector<LsnRange>& ranges) {
  std::vector<std::int64_t> rows(ranges.size(), 0);
  for (const sim::ChangeRow& row : db.ChangeRows(kInstance)) {
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].from <= row.start_lsn && row.start_lsn <= ranges[i].to) ++rows[i];
    }
  }
  return rows;
}

// Ranges tile [from, to] without gap or overlap, every inner bound on a commit LSN.
void ExpectCommitAlignedCover(const std::vector<LsnRange>& ranges, const Lsn& from,
                              const Lsn& to, const std::vector<Lsn>& commits) {
  ASSERT_FALSE(ranges.empty());
  EXPECT_EQ(ranges.front().from, from);
  EXPECT_EQ(ranges.back().to, to);
  for (std::size_t i = 0; i + 1 < ranges.size(); ++i) {
    EXPECT_LE(ranges[i].from, ranges[i].to);
    EXPECT_TRUE(std::find(commits.begin(), commits.end(), ranges[i].to) != commits.end())
        << "range " << i << " ends at " << ranges[i].to.ToString() << ", not a commit";
    EXPECT_EQ(ranges[i + 1].from, ranges[i].to.Increment());
  }
}

std::int64_t SumRows(const std::vector<LsnRange>& ranges) {
  std::int64_t sum = 0;
  for (const LsnRange& r : ranges) sum += r.rows;
  return sum;
}

// 250,000 change rows in 50 commits of 5,000, then an idle entry: built once, it takes a
// while.
class SplitLargeBatchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = new SimCdcDatabase(dir_->File("sim.db"));
    for (int i = 0; i < 50; ++i) commits_.push_back(db_->Commit(5'000));
    idle_ = db_->Idle();
  }
  static void TearDownTestSuite() {
    delete db_;
    delete dir_;
    commits_.clear();
  }

  static TempDir* dir_;
  static SimCdcDatabase* db_;
  static std::vector<Lsn> commits_;
  static Lsn idle_;
};

TempDir* SplitLargeBatchTest::dir_ = nullptr;
SimCdcDatabase* SplitLargeBatchTest::db_ = nullptr;
std::vector<Lsn> SplitLargeBatchTest::commits_;
Lsn SplitLargeBatchTest::idle_;

TEST_F(SplitLargeBatchTest, TwoPartitionsGiveTwoBalancedCommitAlignedRanges) {
  auto source = OpenSimSource(db_->path());
  const Lsn from = db_->enable_lsn().Increment();
  // `to` lies past the last change row: the idle entry belongs to the batch too.
  const auto ranges = BatchPlanner::Split(*source, kInstance, from, idle_, 2);

  ASSERT_EQ(ranges.size(), 2u);
  ExpectCommitAlignedCover(ranges, from, idle_, commits_);
  EXPECT_EQ(SumRows(ranges), 250'000);
  const auto read = RowsRead(db_->db(), ranges);
  EXPECT_EQ(read[0] + read[1], 250'000);
  for (std::int64_t rows : read) {
    EXPECT_GE(rows, 100'000);  // balanced, within a few commits of half
    EXPECT_LE(rows, 150'000);
  }
}

TEST_F(SplitLargeBatchTest, ManyPartitionsKeepAtLeastTheMinimumRowsEach) {
  auto source = OpenSimSource(db_->path());
  const Lsn from = db_->enable_lsn().Increment();
  const auto ranges = BatchPlanner::Split(*source, kInstance, from, idle_, 16);

  // 250,000 rows make at most 5 ranges of 50,000.
  ASSERT_GE(ranges.size(), 2u);
  ASSERT_LE(ranges.size(), 5u);
  ExpectCommitAlignedCover(ranges, from, idle_, commits_);
  EXPECT_EQ(SumRows(ranges), 250'000);
  const auto read = RowsRead(db_->db(), ranges);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_GE(ranges[i].rows, kMinRowsPerPartition);
    // Tile counts misplace at most the rows of one straddling commit at each bound.
    EXPECT_LE(std::abs(read[i] - ranges[i].rows), 2 * 5'000) << "range " << i;
  }
}

TEST_F(SplitLargeBatchTest, OnePartitionGivesTheWholeRangeUncounted) {
  auto source = OpenSimSource(db_->path());
  const Lsn from = db_->enable_lsn().Increment();
  const auto ranges = BatchPlanner::Split(*source, kInstance, from, idle_, 1);

  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].from, from);
  EXPECT_EQ(ranges[0].to, idle_);
  // Not split, so not counted: counting would scan the range once more.
  EXPECT_EQ(ranges[0].rows, kUnknownRows);
}

TEST_F(SplitLargeBatchTest, RangeWithoutChangeRowsGivesNoRange) {
  auto source = OpenSimSource(db_->path());
  // Only the idle entry lies in (last commit, idle].
  EXPECT_TRUE(
      BatchPlanner::Split(*source, kInstance, commits_.back().Increment(), idle_, 4).empty());
}

TEST_F(SplitLargeBatchTest, PartitionsBelowOneAreAConfigError) {
  auto source = OpenSimSource(db_->path());
  EXPECT_THROW(BatchPlanner::Split(*source, kInstance, db_->enable_lsn(), idle_, 0), ConfigError);
}

TEST(Split, FewerThanTwiceTheMinimumRowsGiveOneRange) {
  TempDir dir;
  SimCdcDatabase db(dir.File("sim.db"));
  for (int i = 0; i < 19; ++i) db.Commit(5'000);  // 95,000 rows
  auto source = OpenSimSource(db.path());
  const Lsn from = db.enable_lsn().Increment();
  const Lsn to = *source->MaxLsn();

  const auto ranges = BatchPlanner::Split(*source, kInstance, from, to, 8);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].from, from);
  EXPECT_EQ(ranges[0].to, to);
  EXPECT_EQ(ranges[0].rows, 95'000);
}

TEST(Split, ABigCommitIsNeverCut) {
  TempDir dir;
  SimCdcDatabase db(dir.File("sim.db"));
  const std::vector<Lsn> commits = {db.Commit(60'000), db.Commit(120'000), db.Commit(60'000)};
  auto source = OpenSimSource(db.path());
  const Lsn from = db.enable_lsn().Increment();
  const Lsn to = commits.back();

  // Balance alone would cut the middle commit; the bounds stay on commits.
  const auto two = BatchPlanner::Split(*source, kInstance, from, to, 2);
  ASSERT_EQ(two.size(), 2u);
  ExpectCommitAlignedCover(two, from, to, commits);
  EXPECT_EQ(RowsRead(db.db(), two), (std::vector<std::int64_t>{180'000, 60'000}));

  const auto four = BatchPlanner::Split(*source, kInstance, from, to, 4);
  ASSERT_EQ(four.size(), 3u);
  ExpectCommitAlignedCover(four, from, to, commits);
  EXPECT_EQ(RowsRead(db.db(), four), (std::vector<std::int64_t>{60'000, 120'000, 60'000}));
  EXPECT_EQ(SumRows(four), 240'000);
}

TEST(Split, NoChangeRowsGiveNoRange) {
  TempDir dir;
  SimCdcDatabase db(dir.File("sim.db"));
  db.Idle();
  db.Idle();
  auto source = OpenSimSource(db.path());
  EXPECT_TRUE(BatchPlanner::Split(*source, kInstance, db.enable_lsn().Increment(),
                                  *source->MaxLsn(), 4)
                  .empty());
}

}  // namespace
}  // namespace mssql_cdc
