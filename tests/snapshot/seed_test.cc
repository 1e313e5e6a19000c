// Where a seed stands and how a copy's columns become the stream's: the rules both modes share.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "snapshot/seed.h"
#include "source/sim/sim_source.h"
#include "tests/testing/cdc_table.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using ::testing::HasSubstr;

class SeedPointTest : public ::testing::Test {
 protected:
  SeedPointTest() : path_(dir_.File("cdc.db")) {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 10:00:00")};
    db_ = sim::SimDatabase::Create(path_, options);
    table_ = testing::CreateCdcTable(*db_, "dbo.t", {"id int not null", "v int"}, {"id"});
    for (int i = 0; i < 5; ++i) {
      db_->AdvanceClock(60'000'000);  // a commit a minute, 10:01 to 10:05
      auto t = db_->Begin();
      t->Insert(table_, {{"id", i}, {"v", i}});
      commits_.push_back(*t->Commit().commit_lsn);
    }
    source_ = OpenSimSource(path_);
    instance_ = source_->ResolveCaptureInstance("dbo_t");
  }

  Offset At(const char* utc) {
    return ResolveSeedPoint(*source_, SourceClock::Utc(), instance_,
                            SeedAsOf{UtcMicros{*ParseDateTime(utc)}, std::nullopt},
                            UtcMicros{*ParseDateTime("2026-03-02 00:00:00")});
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<sim::SimDatabase> db_;
  sim::TableName table_;
  std::vector<Lsn> commits_;
  std::unique_ptr<Source> source_;
  CaptureInstanceInfo instance_;
};

TEST_F(SeedPointTest, ATimeMapsToTheLastCommitAtOrBeforeItToTheSecond) {
  EXPECT_EQ(At("2026-03-01 10:03:00").lsn, commits_[2]);
  EXPECT_EQ(At("2026-03-01 10:03:00.900").lsn, commits_[2]);
  EXPECT_EQ(At("2026-03-01 10:04:59").lsn, commits_[3]);
  EXPECT_EQ(*At("2026-03-01 10:03:30").commit_ts, UtcMicros{*ParseDateTime("2026-03-01 10:03:00")});
  const Offset by_lsn = ResolveSeedPoint(*source_, SourceClock::Utc(), instance_,
                                         SeedAsOf{std::nullopt, commits_[1]});
  EXPECT_EQ(by_lsn.lsn, commits_[1]);
}

TEST_F(SeedPointTest, RefusalsSayWhatIsWrong) {
  try {
    At("2026-03-03 00:00:00");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is in the future"));
  }
  EXPECT_THROW(ResolveSeedPoint(*source_, SourceClock::Utc(), instance_,
                                SeedAsOf{std::nullopt, commits_.back().Increment()}),
               ConfigError);
  // Before every commit lsn_time_mapping holds: CDC cannot replay from there.
  EXPECT_THROW(At("2026-03-01 09:00:00"), DataLossError);
  // Cleanup passed the seed's LSN: the changes right after it are gone.
  db_->AdvanceClock(3LL * 3600 * 1'000'000);
  auto later = db_->Begin();
  later->Insert(table_, {{"id", 100}, {"v", 0}});
  later->Commit();  // cleanup's low-water mark follows the newest commit's time
  db_->Cleanup(90);
  source_ = OpenSimSource(path_);
  EXPECT_THROW(At("2026-03-01 10:02:00"), DataLossError);  // older than every entry left
  try {
    ResolveSeedPoint(*source_, SourceClock::Utc(), instance_, SeedAsOf{std::nullopt, commits_[1]});
    FAIL() << "no error";
  } catch (const DataLossError& e) {
    EXPECT_THAT(e.what(), HasSubstr("changes made after the copy was read are gone"));
  }
}

TEST(SeedColumnsTest, MatchedByNameIgnoringCaseTheKeyAlwaysRequired) {
  std::vector<CapturedColumn> captured(3);
  captured[0].name = "id";
  captured[1].name = "Name";
  captured[2].name = "email";
  const SeedColumns matched = MatchSeedColumns(captured, {"id"}, {"ID", "name", "extra", "EMAIL"}, false);
  EXPECT_EQ(matched.from, (std::vector<std::optional<std::string>>{"ID", "name", "EMAIL"}));
  EXPECT_THROW(MatchSeedColumns(captured, {"id"}, {"name", "email"}, true), ConfigError);
  EXPECT_THROW(MatchSeedColumns(captured, {"id"}, {"id", "name"}, false), ConfigError);
  EXPECT_EQ(MatchSeedColumns(captured, {"id"}, {"id", "name"}, true).from[2], std::nullopt);
  EXPECT_THROW(MatchSeedColumns(captured, {"id"}, {"id", "name", "NAME", "email"}, false), ConfigError);
}

TEST(DecideSeedTest, ARerunFindsItsSeedAndAnotherSnapshotNeedsANewerReseed) {
  const Lsn seed = Lsn::Parse("0x00000000000000000010");
  const Lsn older = Lsn::Parse("0x00000000000000000008");
  EXPECT_EQ(DecideSeed(std::nullopt, seed, false), SeedAction::kWrite);
  EXPECT_EQ(DecideSeed(FoundSnapshot{{seed, std::nullopt}, false}, seed, false), SeedAction::kExisting);
  EXPECT_THROW(DecideSeed(FoundSnapshot{{older, std::nullopt}, false}, seed, false), ConfigError);
  EXPECT_EQ(DecideSeed(FoundSnapshot{{older, std::nullopt}, false}, seed, true), SeedAction::kWrite);
  EXPECT_THROW(DecideSeed(FoundSnapshot{{seed, std::nullopt}, false}, older, true), ConfigError);
  EXPECT_THROW(DecideSeed(FoundSnapshot{{older, std::nullopt}, true}, seed, true), ConfigError);
}

TEST(SeedMetadataTest, OperationZeroRowsStampedWithTheSeedsLsnAndCommitTime) {
  const Lsn lsn = Lsn::Parse("0x00000000000000000010");
  const UtcMicros at{1'700'000'000'123'000};
  const auto values = SeedMetadata("dbo_t", Offset{lsn, at});
  EXPECT_EQ(std::get<std::string>(values.at("_capture_instance")), "dbo_t");
  EXPECT_EQ(std::get<std::string>(values.at("_start_lsn")), lsn.ToString());
  EXPECT_EQ(std::get<std::string>(values.at("_snapshot")), lsn.ToString());
  EXPECT_EQ(std::get<std::int32_t>(values.at("_operation")), 0);
  EXPECT_EQ(std::get<UtcMicros>(values.at("_commit_ts")).value, at.value);
  EXPECT_EQ(values.size(), 5u) << "the other metadata columns are NULL";
  EXPECT_FALSE(SeedMetadata("dbo_t", Offset{lsn, std::nullopt}).count("_commit_ts"));
  EXPECT_EQ(SeedCommitMetadata("dbo_t", Offset{lsn, at}),
            "{\"commit_ts\":\"2023-11-14T22:13:20.123\",\"lsn\":\"" + lsn.ToString() + "\",\"seed\":\"dbo_t\"}");
}

}  // namespace
}  // namespace mssql_cdc
