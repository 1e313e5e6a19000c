// The capture process's idle entries: SimDatabase::WriteDueIdleEntries and the CaptureJob
// thread `sim serve` runs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/errors.h"
#include "sim/capture_job.h"
#include "sim/catalog.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

constexpr std::int64_t kSecond = 1'000'000;

std::unique_ptr<SimDatabase> Quiet(const std::string& path, std::optional<double> interval, bool with_cdc = true,
                                   ClockMode clock = ClockMode::kManual) {
  CreateOptions options;
  options.clock = clock;
  options.manual_start = UtcMicros{*ParseDateTime("2026-01-01 00:00:00")};
  if (interval) options.idle_entry_seconds = *interval;
  auto db = SimDatabase::Create(path, options);
  TableDef t;
  t.name = ParseTableName("dbo.items");
  t.columns.push_back(ParseColumnDeclaration("id int not null"));
  t.primary_key = {"id"};
  db->CreateTable(t);
  if (with_cdc) db->EnableCdc(t.name);
  return db;
}

std::vector<LsnTimeEntry> IdleEntries(SimDatabase& db) {
  std::vector<LsnTimeEntry> out;
  for (const auto& e : db.LsnTimeMapping()) {
    if (e.is_idle()) out.push_back(e);
  }
  return out;
}

TEST(IdleEntriesTest, EveryIntervalAfterTheLastEntryStampedWithItsMoment) {
  TempDir dir;
  auto db = Quiet(dir.File("sim.db"), std::nullopt);
  EXPECT_DOUBLE_EQ(db->idle_entry_seconds(), 305);  // SQL Server 2022's, by default
  auto txn = db->Begin();
  txn->Insert(ParseTableName("dbo.items"), {{"id", 1}});
  const Lsn commit = *txn->Commit().commit_lsn;
  EXPECT_EQ(db->WriteDueIdleEntries(), 0);
  db->AdvanceClock(304 * kSecond);
  EXPECT_EQ(db->WriteDueIdleEntries(), 0);
  EXPECT_EQ(*db->MaxLsn(), commit);
  db->AdvanceClock(3 * 305 * kSecond - 304 * kSecond + 10 * kSecond);
  EXPECT_EQ(db->WriteDueIdleEntries(), 3);
  EXPECT_EQ(db->WriteDueIdleEntries(), 0);  // nothing more is due
  const auto idle = IdleEntries(*db);
  ASSERT_EQ(idle.size(), 3u);
  EXPECT_EQ(idle[0].tran_end_time, "2026-01-01 00:05:05.000");
  EXPECT_EQ(idle[1].tran_end_time, "2026-01-01 00:10:10.000");
  EXPECT_EQ(idle[2].tran_end_time, "2026-01-01 00:15:15.000");
  EXPECT_GT(idle[0].start_lsn, commit);
  EXPECT_EQ(*db->MaxLsn(), idle[2].start_lsn);
}

TEST(IdleEntriesTest, AfterACommitInTheSecondReadingOfARepeatedHour) {
  // Pacific time, 1 November 2026: 02:00 PDT becomes 01:00 PST (09:00 UTC). A commit at 01:30
  // PDT, then one at 01:10 PST: the idle entries come after the second, an hour later than its
  // local time read as the first reading would say.
  TempDir dir;
  CreateOptions options;
  options.clock = ClockMode::kManual;
  options.manual_start = UtcMicros{*ParseDateTime("2026-11-01 08:30:00")};
  options.time_zone = "Pacific Standard Time";
  auto db = SimDatabase::Create(dir.File("sim.db"), options);
  TableDef t;
  t.name = ParseTableName("dbo.items");
  t.columns.push_back(ParseColumnDeclaration("id int not null"));
  t.primary_key = {"id"};
  db->CreateTable(t);
  db->EnableCdc(t.name);
  for (const int id : {1, 2}) {
    auto txn = db->Begin();
    txn->Insert(t.name, {{"id", id}});
    txn->Commit();
    db->AdvanceClock(40 * 60 * kSecond);  // 09:10 UTC, then 09:50
  }
  EXPECT_EQ(db->LastEntryUtc()->value, *ParseDateTime("2026-11-01 09:10:00"));
  EXPECT_EQ(db->WriteDueIdleEntries(), 7);  // 40 minutes after 09:10 UTC, not 100 after 08:10
  const auto idle = IdleEntries(*db);
  ASSERT_EQ(idle.size(), 7u);
  EXPECT_EQ(idle[0].tran_end_time, "2026-11-01 01:15:05.000");
  EXPECT_EQ(db->LastEntryUtc()->value, *ParseDateTime("2026-11-01 09:45:35"));
}

TEST(IdleEntriesTest, TheDatabasesIntervalOrAGivenOne) {
  TempDir dir;
  auto db = Quiet(dir.File("sim.db"), 10);
  EXPECT_DOUBLE_EQ(SimDatabase::Open(dir.File("sim.db"))->idle_entry_seconds(), 10);  // kept in the file
  db->AdvanceClock(35 * kSecond);
  EXPECT_EQ(db->WriteDueIdleEntries(), 3);
  db->AdvanceClock(35 * kSecond);
  EXPECT_EQ(db->WriteDueIdleEntries(5), 8);  // from 00:00:30 to 00:01:10
  EXPECT_THROW(db->WriteDueIdleEntries(0), ConfigError);
  CreateOptions zero;
  zero.idle_entry_seconds = 0;
  EXPECT_THROW(SimDatabase::Create(dir.File("zero.db"), zero), ConfigError);
}

TEST(IdleEntriesTest, NoneWithoutACaptureInstanceAndAtMostAThousandAfterALongJump) {
  TempDir dir;
  auto plain = Quiet(dir.File("plain.db"), 1, /*with_cdc=*/false);
  plain->AdvanceClock(100 * kSecond);
  EXPECT_EQ(plain->WriteDueIdleEntries(), 0);
  EXPECT_FALSE(plain->MaxLsn());

  auto db = Quiet(dir.File("sim.db"), 1);
  db->AdvanceClock(86'400 * kSecond);
  EXPECT_EQ(db->WriteDueIdleEntries(), 1000);
  const auto idle = IdleEntries(*db);
  EXPECT_EQ(idle.back().tran_end_time, "2026-01-02 00:00:00.000");  // the latest ones are kept
  EXPECT_EQ(idle.front().tran_end_time, "2026-01-01 23:43:21.000");
}

TEST(IdleEntriesTest, TheCaptureJobWritesThemWhileItLives) {
  TempDir dir;
  auto db = Quiet(dir.File("sim.db"), 0.2, true, ClockMode::kReal);
  {
    const CaptureJob job(dir.File("sim.db"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (IdleEntries(*db).size() < 3 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  const auto written = IdleEntries(*db).size();
  EXPECT_GE(written, 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(IdleEntries(*db).size(), written);  // stopped with the job
}

}  // namespace
}  // namespace mssql_cdc::sim
