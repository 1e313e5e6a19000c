#include "sim/workload.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

std::unique_ptr<SimDatabase> DemoDatabase(const std::string& path) {
  CreateOptions options;
  options.clock = ClockMode::kManual;
  options.manual_start = UtcMicros{*ParseDateTime("2026-01-01 00:00:00")};
  auto db = SimDatabase::Create(path, options);
  CreateDemoSchema(*db);
  return db;
}

TEST(OperationMixTest, ParsesAndValidates) {
  auto mix = OperationMix::Parse("insert=0.5, update=0.35,delete=0.15");
  EXPECT_DOUBLE_EQ(mix.insert, 0.5);
  EXPECT_DOUBLE_EQ(mix.update, 0.35);
  EXPECT_DOUBLE_EQ(mix.remove, 0.15);
  mix = OperationMix::Parse("insert=1");
  EXPECT_DOUBLE_EQ(mix.update, 0);
  EXPECT_THROW(OperationMix::Parse("insert=-1,update=2"), ConfigError);
  EXPECT_THROW(OperationMix::Parse("insert=0,update=0"), ConfigError);
  EXPECT_THROW(OperationMix::Parse("upsert=1"), ConfigError);
  EXPECT_THROW(OperationMix::Parse("insert=abc"), ConfigError);
  EXPECT_THROW(OperationMix::Parse("insert"), ConfigError);
  EXPECT_THROW(OperationMix::Parse("insert=1,insert=2"), ConfigError);
}

TEST(WorkloadTest, RejectsBadOptions) {
  TempDir dir;
  auto db = DemoDatabase(dir.File("sim.db"));
  WorkloadOptions o;
  EXPECT_THROW(Workload(*db, o), ConfigError);  // neither duration nor count
  o.transactions = 1;
  o.transactions_per_second = 0;
  EXPECT_THROW(Workload(*db, o), ConfigError);
  o.transactions_per_second = 10;
  o.statements_per_transaction = 0;
  EXPECT_THROW(Workload(*db, o), ConfigError);
  o.statements_per_transaction = 1;
  o.tables = {ParseTableName("dbo.nope")};
  EXPECT_THROW(Workload(*db, o).Run(), NotFoundError);
}

TEST(WorkloadTest, SameSeedGivesIdenticalChangeTables) {
  TempDir dir;
  WorkloadOptions o;
  o.transactions = 300;
  o.statements_per_transaction = 3;
  o.seed = 42;
  auto a = DemoDatabase(dir.File("a.db"));
  auto b = DemoDatabase(dir.File("b.db"));
  const auto ra = Workload(*a, o).Run();
  const auto rb = Workload(*b, o).Run();
  EXPECT_EQ(ra.transactions, 300);
  EXPECT_EQ(ra.last_commit_lsn, rb.last_commit_lsn);
  for (const char* ci : {"dbo_customers", "dbo_orders", "dbo_order_items"}) {
    const auto rows_a = a->ChangeRows(ci);
    const auto rows_b = b->ChangeRows(ci);
    ASSERT_EQ(rows_a.size(), rows_b.size()) << ci;
    EXPECT_GT(rows_a.size(), 0u);
    for (std::size_t i = 0; i < rows_a.size(); ++i) {
      EXPECT_EQ(rows_a[i].start_lsn, rows_b[i].start_lsn);
      EXPECT_EQ(rows_a[i].seqval, rows_b[i].seqval);
      EXPECT_EQ(rows_a[i].values, rows_b[i].values);
    }
  }
  const auto map_a = a->LsnTimeMapping();
  const auto map_b = b->LsnTimeMapping();
  ASSERT_EQ(map_a.size(), map_b.size());
  for (std::size_t i = 0; i < map_a.size(); ++i) {
    EXPECT_EQ(map_a[i].tran_end_time, map_b[i].tran_end_time);
  }
  // A different seed gives different data.
  auto c = DemoDatabase(dir.File("c.db"));
  o.seed = 43;
  Workload(*c, o).Run();
  EXPECT_NE(a->ChangeRows("dbo_customers")[0].values, c->ChangeRows("dbo_customers")[0].values);
}

TEST(WorkloadTest, MixIsRoughlyHonoured) {
  TempDir dir;
  auto db = DemoDatabase(dir.File("sim.db"));
  WorkloadOptions o;
  o.transactions = 2000;
  o.mix = OperationMix::Parse("insert=0.5,update=0.35,delete=0.15");
  const auto report = Workload(*db, o).Run();
  const double total = static_cast<double>(report.inserts + report.updates + report.deletes);
  EXPECT_EQ(total, 2000);
  EXPECT_NEAR(report.inserts / total, 0.5, 0.05);
  EXPECT_NEAR(report.updates / total, 0.35, 0.05);
  EXPECT_NEAR(report.deletes / total, 0.15, 0.05);
  // The change tables agree with the report: one row per insert and delete, two per update.
  std::int64_t ops[5] = {};
  for (const char* ci : {"dbo_customers", "dbo_orders", "dbo_order_items"}) {
    for (const auto& [op, count] : db->OperationCounts(ci)) ops[op] += count;
  }
  EXPECT_EQ(ops[2], report.inserts);
  EXPECT_EQ(ops[3], report.updates);
  EXPECT_EQ(ops[4], report.updates);
  EXPECT_EQ(ops[1], report.deletes);
}

TEST(WorkloadTest, ManualClockAdvancesPerTransactionAndWritesIdleEntries) {
  TempDir dir;
  auto db = DemoDatabase(dir.File("sim.db"));
  const UtcMicros start = db->NowUtc();
  WorkloadOptions o;
  o.transactions_per_second = 0.1;  // one transaction per 10 s: idle entries in between
  o.duration_seconds = 100;
  o.idle_entry_seconds = 5;
  const auto report = Workload(*db, o).Run();
  EXPECT_EQ(report.transactions, 10);
  EXPECT_EQ(db->NowUtc().value - start.value, 100'000'000);
  EXPECT_GE(report.idle_entries, 9);
  std::int64_t idle = 0;
  for (const auto& e : db->LsnTimeMapping()) idle += e.is_idle() ? 1 : 0;
  EXPECT_EQ(idle, report.idle_entries);
}

TEST(WorkloadTest, LongTransactionCommitsAfterTheShortOnes) {
  TempDir dir;
  auto db = DemoDatabase(dir.File("sim.db"));
  WorkloadOptions o;
  o.transactions = 50;
  o.transactions_per_second = 10;
  o.long_transaction_seconds = 2;
  const auto report = Workload(*db, o).Run();
  EXPECT_GE(report.long_transactions, 2);
  // The long transaction began first but its commit is later than the short ones that ran
  // meanwhile: its begin time is older than that of the entry before it.
  const auto mapping = db->LsnTimeMapping();
  bool found = false;
  for (std::size_t i = 1; i < mapping.size(); ++i) {
    if (mapping[i].tran_begin_time < mapping[i - 1].tran_begin_time) found = true;
    EXPECT_LT(mapping[i - 1].start_lsn, mapping[i].start_lsn);
  }
  EXPECT_TRUE(found);
}

TEST(WorkloadTest, BulkModeWritesMultiRowTransactions) {
  TempDir dir;
  auto db = DemoDatabase(dir.File("sim.db"));
  WorkloadOptions o;
  o.transactions = 3;
  o.bulk = true;
  o.bulk_rows = 500;
  o.mix = OperationMix::Parse("insert=1");
  o.tables = {ParseTableName("dbo.orders")};
  const auto report = Workload(*db, o).Run();
  EXPECT_EQ(report.inserts, 1500);
  EXPECT_EQ(db->RowCount(ParseTableName("dbo.orders")), 1500);
  const auto rows = db->ChangeRows("dbo_orders");
  ASSERT_EQ(rows.size(), 1500u);
  EXPECT_EQ(rows[0].start_lsn, rows[499].start_lsn);
  EXPECT_EQ(rows[499].command_id, 500);
  EXPECT_LT(rows[499].start_lsn, rows[500].start_lsn);
}

TEST(WorkloadTest, TwoWorkloadsOnOneFileBothCommitEveryTransaction) {
  TempDir dir;
  const std::string path = dir.File("sim.db");
  SimDatabase::Create(path);  // the real clock, so that the two interleave
  CreateDemoSchema(*SimDatabase::Open(path));
  WorkloadReport reports[2];
  std::exception_ptr errors[2];
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      try {
        auto db = SimDatabase::Open(path);  // a connection of its own, as another process has
        WorkloadOptions o;
        o.transactions = 150;
        o.transactions_per_second = 300;
        o.statements_per_transaction = 3;
        o.seed = 7;  // one seed for both: they pick the same keys unless they look again
        reports[w] = Workload(*db, o).Run();
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  auto db = SimDatabase::Open(path);
  std::int64_t inserts = 0, deletes = 0, changes = 0;
  for (const auto& r : reports) {
    EXPECT_EQ(r.transactions, 150);
    inserts += r.inserts;
    deletes += r.deletes;
    changes += r.inserts + 2 * r.updates + r.deletes;
  }
  std::int64_t rows = 0, change_rows = 0;
  for (const auto& instance : db->CaptureInstances()) {
    rows += db->RowCount(instance.table);
    change_rows += db->ChangeRowCount(instance.name);
  }
  // Every statement of every committed transaction, and nothing else, reached the tables.
  EXPECT_EQ(rows, inserts - deletes);
  EXPECT_EQ(change_rows, changes);
}

}  // namespace
}  // namespace mssql_cdc::sim
