// The max LSN shared by the streams of one pool: answered again within its freshness, asked
// of the source once it is older.
#include "source/max_lsn_cache.h"

#include <gtest/gtest.h>

#include "core/time.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "source/sim/sim_source.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

class MaxLsnCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 10:00:00")};
    db_ = sim::SimDatabase::Create(dir_.File("cdc.db"), options);
    sim::TableDef table;
    table.name = sim::TableName{"dbo", "t"};
    table.columns = {sim::ParseColumnDeclaration("id int not null")};
    table.primary_key = {"id"};
    db_->CreateTable(table);
    db_->EnableCdc(table.name);
    Commit(1);
    source_ = OpenSimSource(dir_.File("cdc.db"));
  }

  Lsn Commit(int id) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    txn->Insert(sim::TableName{"dbo", "t"}, {{"id", id}});
    return *txn->Commit().commit_lsn;
  }

  testing::TempDir dir_;
  std::unique_ptr<sim::SimDatabase> db_;
  std::unique_ptr<Source> source_;
};

TEST_F(MaxLsnCacheTest, AFreshAnswerIsGivenAgainWithoutAsking) {
  MaxLsnCache cache(std::chrono::hours(1));
  const auto first = cache.Get(*source_);
  ASSERT_TRUE(first);
  EXPECT_EQ(first, source_->MaxLsn());
  const Lsn newer = Commit(2);
  EXPECT_EQ(source_->MaxLsn(), newer);
  EXPECT_EQ(cache.Get(*source_), first);  // within the hour: the answer kept
}

TEST_F(MaxLsnCacheTest, AnAnswerOlderThanItsFreshnessIsAskedAgain) {
  MaxLsnCache cache(std::chrono::milliseconds(0));
  const auto first = cache.Get(*source_);
  const Lsn newer = Commit(2);
  ASSERT_NE(first, newer);
  EXPECT_EQ(cache.Get(*source_), newer);
}

TEST_F(MaxLsnCacheTest, FreshGivesOnlyAnAnswerYoungerThanItsFreshness) {
  MaxLsnCache fresh_for_an_hour(std::chrono::hours(1));
  EXPECT_FALSE(fresh_for_an_hour.Fresh());  // nothing asked yet, and Fresh asks nothing
  const auto first = fresh_for_an_hour.Get(*source_);
  Commit(2);
  EXPECT_EQ(fresh_for_an_hour.Fresh(), first);

  MaxLsnCache never_fresh(std::chrono::milliseconds(0));
  ASSERT_TRUE(never_fresh.Get(*source_));
  EXPECT_FALSE(never_fresh.Fresh());
}

}  // namespace
}  // namespace mssql_cdc
