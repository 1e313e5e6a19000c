// The completeness verdict: truncation, forward-only advances (also between concurrent
// writers), the columns silver keeps in the same row, is_final's boundary, and the conditional
// upsert of the Delta table that makes forward-only hold under races.
#include "engine/finalization.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>
#include <thread>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/table_schemas.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

UtcMicros At(const char* text) { return UtcMicros{*ParseDateTime(text)}; }

Offset EndAt(std::uint64_t lsn, const char* commit_time) {
  return Offset{Lsn::FromUint64(lsn), At(commit_time)};
}

using testing::TempDir;

// One control row as the silver writer stores it: its columns set, no verdict yet.
std::shared_ptr<arrow::Table> SilverRow(const std::string& name, const std::string& applied_lsn,
                                        int wave) {
  auto schema = ControlSchema();
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    std::shared_ptr<arrow::Scalar> value;
    if (field->name() == "table_name") value = std::make_shared<arrow::StringScalar>(name);
    if (field->name() == "applied_lsn") value = std::make_shared<arrow::StringScalar>(applied_lsn);
    if (field->name() == "snapshot_lsn") value = std::make_shared<arrow::StringScalar>("0xS");
    if (field->name() == "open_snapshot_lsn") value = std::make_shared<arrow::StringScalar>("0xO");
    if (field->name() == "snapshot_wave") value = std::make_shared<arrow::Int32Scalar>(wave);
    columns.push_back(value ? *arrow::MakeArrayFromScalar(*value, 1)
                            : *arrow::MakeArrayOfNull(field->type(), 1));
  }
  return arrow::Table::Make(schema, columns, 1);
}

std::string StringCell(const std::shared_ptr<arrow::Table>& table, const std::string& column) {
  auto cell = *table->GetColumnByName(column)->GetScalar(0);
  return cell->is_valid ? cell->ToString() : "NULL";
}

TEST(FinalizationTruncate, FloorsToTheGranularityInUtc) {
  auto time = At("2024-03-01 10:37:12.345678");
  EXPECT_EQ(Truncate(time, Granularity::kMinute), At("2024-03-01 10:37"));
  EXPECT_EQ(Truncate(time, Granularity::kHour), At("2024-03-01 10:00"));
  EXPECT_EQ(Truncate(time, Granularity::kDay), At("2024-03-01"));
  EXPECT_EQ(Truncate(At("2024-03-01 10:00"), Granularity::kHour), At("2024-03-01 10:00"));
  // Before 1970 the period is the one containing the time, not the one nearer to zero.
  EXPECT_EQ(Truncate(At("1969-12-31 23:59:59.5"), Granularity::kDay), At("1969-12-31"));
  EXPECT_EQ(Truncate(At("1969-12-31 23:59:59.5"), Granularity::kMinute),
            At("1969-12-31 23:59"));
}

TEST(FinalizationTruncate, ParsesGranularityNames) {
  EXPECT_EQ(ParseGranularity("minute"), Granularity::kMinute);
  EXPECT_EQ(ParseGranularity("hour"), Granularity::kHour);
  EXPECT_EQ(ParseGranularity("Day"), Granularity::kDay);
  EXPECT_THROW(ParseGranularity("week"), ConfigError);
  EXPECT_THROW(ParseGranularity(""), ConfigError);
}

TEST(FinalizationControlTable, IsCreatedOnceAndAnotherTableIsRefused) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EnsureControlTable(dir.path());
  EnsureControlTable(dir.path());
  auto table = delta::DeltaTable::Open(dir.path());
  EXPECT_EQ(table.state().version, 0);
  EXPECT_TRUE(table.state().schema()->Equals(*ControlSchema(), /*check_metadata=*/false));

  TempDir facts(TempDir::Mode::kNameOnly);
  delta::DeltaTable::Create(facts.path(), FactsTableOptions());
  EXPECT_THROW(EnsureControlTable(facts.path()), ConfigError);
}

TEST(FinalizationAdvance, MovesForwardOnly) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EXPECT_TRUE(Advance(dir.path(), "dbo.orders", EndAt(100, "2024-03-01 10:37:12")));
  auto verdict = ReadVerdict(dir.path(), "dbo.orders");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->table_name, "dbo.orders");
  EXPECT_EQ(verdict->finalized_until, At("2024-03-01 10:00"));
  EXPECT_EQ(verdict->end_lsn, Lsn::FromUint64(100).ToString());
  EXPECT_EQ(verdict->end_commit_ts, At("2024-03-01 10:37:12"));
  EXPECT_LE(verdict->updated_at, NowUtc());
  EXPECT_GT(verdict->updated_at.value, NowUtc().value - 60 * kMicrosPerSecond);

  // Earlier, and later within the same hour: nothing moves, the row keeps its end offset.
  EXPECT_FALSE(Advance(dir.path(), "dbo.orders", EndAt(90, "2024-03-01 09:59:59")));
  EXPECT_FALSE(Advance(dir.path(), "dbo.orders", EndAt(110, "2024-03-01 10:59:59")));
  auto unchanged = ReadVerdict(dir.path(), "dbo.orders");
  EXPECT_EQ(unchanged->finalized_until, At("2024-03-01 10:00"));
  EXPECT_EQ(unchanged->end_lsn, Lsn::FromUint64(100).ToString());
  EXPECT_EQ(unchanged->updated_at, verdict->updated_at);

  EXPECT_TRUE(Advance(dir.path(), "dbo.orders", EndAt(120, "2024-03-01 11:00:00")));
  EXPECT_EQ(ReadVerdict(dir.path(), "dbo.orders")->finalized_until, At("2024-03-01 11:00"));
  // Another table's verdict is its own row.
  EXPECT_FALSE(ReadVerdict(dir.path(), "dbo.customers"));
  EXPECT_TRUE(Advance(dir.path(), "dbo.customers", EndAt(5, "2024-01-01 00:30"),
                      Granularity::kMinute));
  EXPECT_EQ(ReadVerdict(dir.path(), "dbo.customers")->finalized_until, At("2024-01-01 00:30"));
  EXPECT_EQ(ReadVerdict(dir.path(), "dbo.orders")->finalized_until, At("2024-03-01 11:00"));
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).Read()->num_rows(), 2);
}

TEST(FinalizationAdvance, AnEndOffsetWithoutCommitTimeMovesNothing) {
  TempDir dir(TempDir::Mode::kNameOnly);
  Offset unknown{Lsn::FromUint64(500), std::nullopt};
  EXPECT_FALSE(Advance(dir.path(), "dbo.orders", unknown));
  EXPECT_FALSE(ReadVerdict(dir.path(), "dbo.orders"));

  ASSERT_TRUE(Advance(dir.path(), "dbo.orders", EndAt(100, "2024-03-01 10:37")));
  auto version = delta::DeltaTable::Open(dir.path()).state().version;
  EXPECT_FALSE(Advance(dir.path(), "dbo.orders", unknown));
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).state().version, version);
  EXPECT_EQ(ReadVerdict(dir.path(), "dbo.orders")->end_lsn, Lsn::FromUint64(100).ToString());
}

TEST(FinalizationAdvance, KeepsTheColumnsSilverWrote) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EnsureControlTable(dir.path());
  delta::DeltaTable::Open(dir.path())
      .UpsertByKey("table_name", SilverRow("silver.orders", "0xA1", 3));
  EXPECT_FALSE(ReadVerdict(dir.path(), "silver.orders"));  // a row, but no verdict yet

  ASSERT_TRUE(Advance(dir.path(), "silver.orders", EndAt(100, "2024-03-01 10:37")));
  ASSERT_TRUE(Advance(dir.path(), "silver.orders", EndAt(200, "2024-03-01 12:01")));
  auto rows = delta::DeltaTable::Open(dir.path()).Read();
  ASSERT_EQ(rows->num_rows(), 1);
  EXPECT_EQ(StringCell(rows, "applied_lsn"), "0xA1");
  EXPECT_EQ(StringCell(rows, "snapshot_lsn"), "0xS");
  EXPECT_EQ(StringCell(rows, "open_snapshot_lsn"), "0xO");
  EXPECT_EQ(StringCell(rows, "snapshot_wave"), "3");
  EXPECT_EQ(StringCell(rows, "end_lsn"), Lsn::FromUint64(200).ToString());
  EXPECT_EQ(ReadVerdict(dir.path(), "silver.orders")->finalized_until, At("2024-03-01 12:00"));
}

TEST(FinalizationAdvance, ManyTablesMoveInOneCommitEachForwardOnly) {
  TempDir dir;
  const std::string control = dir.path() + "/control";
  Advance(control, "dbo.b", EndAt(5, "2026-03-01 12:00:00"), Granularity::kHour);
  const int moved = AdvanceMany(control,
                                {{"dbo.a", EndAt(10, "2026-03-01 10:30:00")},
                                 {"dbo.b", EndAt(6, "2026-03-01 11:10:00")},  // backwards: stays
                                 {"dbo.a", EndAt(11, "2026-03-01 11:45:00")},  // the later end wins
                                 {"dbo.c", EndAt(12, "2026-03-01 09:00:00")}},
                                Granularity::kHour);
  EXPECT_EQ(moved, 2);
  EXPECT_EQ(ReadVerdict(control, "dbo.a")->finalized_until, At("2026-03-01 11:00:00"));
  EXPECT_EQ(ReadVerdict(control, "dbo.a")->end_lsn, Lsn::FromUint64(11).ToString());
  EXPECT_EQ(ReadVerdict(control, "dbo.b")->finalized_until, At("2026-03-01 12:00:00"));
  EXPECT_EQ(ReadVerdict(control, "dbo.c")->finalized_until, At("2026-03-01 09:00:00"));
  auto table = delta::DeltaTable::Open(control);
  EXPECT_EQ(table.Read()->num_rows(), 3);
  EXPECT_EQ(table.state().version, 2);  // create, dbo.b, then the one commit of AdvanceMany
}

TEST(FinalizationAdvance, AVerdictWriterGroupsTheMovesOfManyThreads) {
  TempDir dir;
  const std::string control = dir.path() + "/control";
  EnsureControlTable(control);
  VerdictWriter writer(control, Granularity::kMinute);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int minute = 0; minute < 10; ++minute) {
        char time[32];
        std::snprintf(time, sizeof time, "2026-03-01 10:%02d:30", minute);
        writer.Advance("dbo.t" + std::to_string(t), EndAt(100 + minute, time));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 6; ++t) {
    EXPECT_EQ(ReadVerdict(control, "dbo.t" + std::to_string(t))->finalized_until,
              At("2026-03-01 10:09:00"));
  }
  EXPECT_LE(delta::DeltaTable::Open(control).state().version, 60);
}

// A writer keeps its control table open between writes: what other writers commit meanwhile
// (a later verdict, silver's columns) must still be seen, not overwritten from a stale read.
TEST(FinalizationAdvance, AVerdictWriterSeesWhatOthersCommittedBetweenItsWrites) {
  TempDir dir(TempDir::Mode::kNameOnly);
  VerdictWriter writer(dir.path(), Granularity::kHour);
  writer.Advance("dbo.a", EndAt(10, "2026-03-01 10:30:00"));
  ASSERT_TRUE(Advance(dir.path(), "dbo.a", EndAt(20, "2026-03-01 12:30:00")));
  delta::DeltaTable::Open(dir.path()).UpsertByKey("table_name", SilverRow("dbo.b", "0xB1", 2));
  writer.Advance("dbo.a", EndAt(15, "2026-03-01 11:30:00"));  // behind the other writer: stays
  writer.Advance("dbo.b", EndAt(30, "2026-03-01 09:10:00"));
  const auto verdicts = ReadVerdicts(dir.path());
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts.at("dbo.a").finalized_until, At("2026-03-01 12:00:00"));
  EXPECT_EQ(verdicts.at("dbo.a").end_lsn, Lsn::FromUint64(20).ToString());
  EXPECT_EQ(verdicts.at("dbo.b").finalized_until, At("2026-03-01 09:00:00"));
  auto rows = delta::DeltaTable::Open(dir.path()).Read({{"table_name", "=", "dbo.b"}});
  ASSERT_EQ(rows->num_rows(), 1);
  EXPECT_EQ(StringCell(rows, "applied_lsn"), "0xB1");
  EXPECT_EQ(StringCell(rows, "snapshot_wave"), "2");
}

TEST(FinalizationReadVerdicts, RowsWithoutAVerdictAndAMissingTableGiveNone) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EXPECT_TRUE(ReadVerdicts(dir.path()).empty());
  EnsureControlTable(dir.path());
  delta::DeltaTable::Open(dir.path()).UpsertByKey("table_name", SilverRow("silver.orders", "0xA1", 1));
  EXPECT_TRUE(ReadVerdicts(dir.path()).empty());
  ASSERT_TRUE(Advance(dir.path(), "dbo.orders", EndAt(100, "2024-03-01 10:37")));
  const auto verdicts = ReadVerdicts(dir.path());
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts.at("dbo.orders").finalized_until, At("2024-03-01 10:00"));
  EXPECT_EQ(verdicts.at("dbo.orders").table_name, "dbo.orders");
}

// `row` with finalized_until set to `until`.
std::shared_ptr<arrow::Table> WithVerdict(const std::shared_ptr<arrow::Table>& row, const char* until) {
  const int i = row->schema()->GetFieldIndex("finalized_until");
  const auto type = row->schema()->field(i)->type();
  auto value = *arrow::MakeArrayFromScalar(arrow::TimestampScalar(At(until).value, type), 1);
  return *row->SetColumn(i, row->schema()->field(i), std::make_shared<arrow::ChunkedArray>(value));
}

TEST(FinalizationAmong, ADuplicatedNameYieldsItsLatestVerdictAndItsNewestPosition) {
  // Two rows of one name, as a control table named in a catalog may hold them: the verdict is
  // the latest finalized_until and the position the row of the newest applied_lsn, in either
  // order, as a read of the table at a path decides.
  const auto ahead = WithVerdict(SilverRow("silver.orders", "0xA2", 2), "2024-03-01 09:00");
  const auto behind = WithVerdict(SilverRow("silver.orders", "0xA1", 1), "2024-03-01 10:00");
  for (const auto& rows : {*arrow::ConcatenateTables({ahead, behind}),
                           *arrow::ConcatenateTables({behind, ahead})}) {
    const auto verdict = VerdictAmong(rows, "silver.orders");
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->finalized_until, At("2024-03-01 10:00"));
    const auto position = SilverPositionAmong(rows);
    ASSERT_TRUE(position);
    EXPECT_EQ(position->applied_lsn, "0xA2");
    EXPECT_EQ(position->snapshot_wave, 2);
  }
  EXPECT_FALSE(VerdictAmong(SilverRow("silver.orders", "0xA1", 1), "silver.orders"));
  EXPECT_FALSE(SilverPositionAmong(SilverRow("silver.orders", "0xA1", 1)->Slice(0, 0)));
}

TEST(FinalizationIsFinal, PeriodsEndingAtOrBeforeTheVerdictAreFinal) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EXPECT_FALSE(IsFinal(dir.path(), "dbo.orders", At("2000-01-01")));  // no control table
  ASSERT_TRUE(Advance(dir.path(), "dbo.orders", EndAt(100, "2024-03-01 10:37")));
  EXPECT_TRUE(IsFinal(dir.path(), "dbo.orders", At("2024-03-01 09:00")));
  EXPECT_TRUE(IsFinal(dir.path(), "dbo.orders", At("2024-03-01 10:00")));
  EXPECT_FALSE(IsFinal(dir.path(), "dbo.orders", At("2024-03-01 10:00:00.000001")));
  EXPECT_FALSE(IsFinal(dir.path(), "dbo.orders", At("2024-03-01 11:00")));
  EXPECT_FALSE(IsFinal(dir.path(), "dbo.customers", At("2000-01-01")));
}

TEST(FinalizationConcurrency, TwoWritersEndAtTheMaximumAndNeverMoveBack) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EnsureControlTable(dir.path());
  constexpr int kHours = 24;
  const auto base = At("2024-03-01");
  // Writer A offers the even hours, writer B the odd ones, each in its own shuffled order, so
  // each regularly offers a candidate older than what the other has just written.
  auto writer = [&](int parity, unsigned seed) {
    std::vector<int> hours;
    for (int h = parity; h < kHours; h += 2) hours.push_back(h);
    std::shuffle(hours.begin(), hours.end(), std::mt19937(seed));
    for (int h : hours) {
      UtcMicros commit{base.value + h * kMicrosPerHour + 30 * kMicrosPerMinute};
      Advance(dir.path(), "dbo.orders", Offset{Lsn::FromUint64(1000 + h), commit});
    }
  };
  std::atomic<bool> done{false};
  auto observer = std::async(std::launch::async, [&] {
    std::int64_t seen = INT64_MIN;
    int backwards = 0;
    while (!done) {
      if (auto verdict = ReadVerdict(dir.path(), "dbo.orders")) {
        if (verdict->finalized_until.value < seen) ++backwards;
        seen = std::max(seen, verdict->finalized_until.value);
        // The stored end offset is always the one that produced the stored verdict.
        EXPECT_EQ(Truncate(verdict->end_commit_ts, Granularity::kHour), verdict->finalized_until);
      }
    }
    return backwards;
  });
  auto a = std::async(std::launch::async, writer, 0, 1u);
  auto b = std::async(std::launch::async, writer, 1, 2u);
  a.get();
  b.get();
  done = true;
  EXPECT_EQ(observer.get(), 0);
  auto verdict = ReadVerdict(dir.path(), "dbo.orders");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->finalized_until.value, base.value + (kHours - 1) * kMicrosPerHour);
  EXPECT_EQ(verdict->end_lsn, Lsn::FromUint64(1000 + kHours - 1).ToString());
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).Read()->num_rows(), 1);
}

// The conditional upsert the verdict relies on, exercised directly.
TEST(FinalizationConditionalUpsert, ARefusedConditionCommitsNothing) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EnsureControlTable(dir.path());
  auto table = delta::DeltaTable::Open(dir.path());
  table.UpsertByKey("table_name", SilverRow("t", "0x01", 1));
  std::int64_t seen_rows = -1;
  auto result = table.UpsertByKey("table_name", SilverRow("t", "0x02", 2), {},
                                  [&](const std::shared_ptr<arrow::Table>& current) {
                                    seen_rows = current->num_rows();
                                    EXPECT_EQ(StringCell(current, "applied_lsn"), "0x01");
                                    return false;
                                  });
  EXPECT_EQ(seen_rows, 1);
  EXPECT_FALSE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).state().version, 1);
  EXPECT_EQ(StringCell(delta::DeltaTable::Open(dir.path()).Read(), "applied_lsn"), "0x01");

  // Only the rows of the upserted keys are offered; none for a new key.
  auto added = table.UpsertByKey("table_name", SilverRow("u", "0x09", 1), {},
                                 [&](const std::shared_ptr<arrow::Table>& current) {
                                   seen_rows = current->num_rows();
                                   return true;
                                 });
  EXPECT_EQ(seen_rows, 0);
  EXPECT_TRUE(added.written);
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).Read()->num_rows(), 2);
}

TEST(FinalizationConditionalUpsert, TheConditionIsCheckedAgainAfterALostRace) {
  TempDir dir(TempDir::Mode::kNameOnly);
  EnsureControlTable(dir.path());
  auto table = delta::DeltaTable::Open(dir.path());
  table.UpsertByKey("table_name", SilverRow("t", "0x01", 1));
  std::vector<std::string> offered;
  auto result = table.UpsertByKey(
      "table_name", SilverRow("t", "0x02", 2), {},
      [&](const std::shared_ptr<arrow::Table>& current) {
        offered.push_back(StringCell(current, "applied_lsn"));
        if (offered.size() == 1) {
          // Another writer commits between this check and the commit it approves.
          delta::DeltaTable::Open(dir.path()).UpsertByKey("table_name", SilverRow("t", "0x05", 5));
        }
        return StringCell(current, "applied_lsn") == "0x01";
      });
  EXPECT_EQ(offered, (std::vector<std::string>{"0x01", "0x05"}));
  EXPECT_FALSE(result.written);
  EXPECT_EQ(StringCell(delta::DeltaTable::Open(dir.path()).Read(), "applied_lsn"), "0x05");
  EXPECT_EQ(delta::DeltaTable::Open(dir.path()).state().version, 2);
}

// A clock the tests move by hand.
struct ManualClock {
  std::chrono::steady_clock::time_point now{};
  ConflictRetry::Clock AsClock() {
    return [this] { return now; };
  }
};

TEST(FinalizationConflictRetry, GivesUpAfterAMinuteInWhichTheTableDidNotMove) {
  ManualClock clock;
  ConflictRetry retry(clock.AsClock());
  retry.SawTableVersion(5);
  clock.now += std::chrono::seconds(59);
  retry.SawTableVersion(5);
  EXPECT_TRUE(retry.NextDelay().has_value());
  clock.now += std::chrono::seconds(1);
  EXPECT_TRUE(retry.Expired());
  EXPECT_FALSE(retry.NextDelay().has_value());
}

TEST(FinalizationConflictRetry, KeepsTryingWhileOtherWritersCommitForTenMinutesAtMost) {
  ManualClock clock;
  ConflictRetry retry(clock.AsClock());
  std::int64_t version = 1;
  retry.SawTableVersion(version);
  for (int i = 0; i < 19; ++i) {  // 9.5 minutes of losing to writers that commit
    clock.now += std::chrono::seconds(30);
    retry.SawTableVersion(++version);
    ASSERT_TRUE(retry.NextDelay().has_value()) << "after " << (i + 1) * 30 << " s";
  }
  clock.now += std::chrono::seconds(29);
  retry.SawTableVersion(++version);
  EXPECT_FALSE(retry.Expired());
  clock.now += std::chrono::seconds(1);  // ten minutes in all
  retry.SawTableVersion(++version);
  EXPECT_TRUE(retry.Expired());
}

TEST(FinalizationConflictRetry, AnOlderVersionIsNotProgress) {
  ManualClock clock;
  ConflictRetry retry(clock.AsClock());
  retry.SawTableVersion(7);
  clock.now += std::chrono::seconds(50);
  retry.SawTableVersion(6);  // read from a lagging replica of the log, say
  clock.now += std::chrono::seconds(10);
  EXPECT_TRUE(retry.Expired());
}

}  // namespace
}  // namespace mssql_cdc
