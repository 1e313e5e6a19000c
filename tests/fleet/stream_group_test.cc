// Many streams in one process (StreamGroup) over a simulated shop database with a manual
// clock: template and option checks before anything starts, per-table overrides, the shared
// facts table, start failures, failure isolation and AwaitAll's timeout.
#include "fleet/stream_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "delta/table.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "sim/workload.h"
#include "tests/testing/test_backend.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

namespace fs = std::filesystem;
using stream_testing::At;
using stream_testing::ChangeKey;
using stream_testing::Int64Column;
using stream_testing::StringColumn;
using stream_testing::TempDir;

const std::vector<std::string> kTables = {"dbo_customers", "dbo_orders", "dbo_order_items"};

class StreamGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = At("2026-03-01 00:00:00");
    db_ = sim::SimDatabase::Create(dir_.File("shop.sim"), options);
    sim::CreateDemoSchema(*db_);
  }

  void Work(std::int64_t transactions, std::uint64_t seed,
            std::vector<sim::TableName> tables = {}) {
    sim::WorkloadOptions options;
    options.transactions_per_second = 50;
    options.transactions = transactions;
    options.statements_per_transaction = 2;
    options.seed = seed;
    options.tables = std::move(tables);
    sim::Workload(*db_, options).Run();
  }

  ManyConfig Config(const std::vector<std::string>& tables = kTables,
                    const std::string& trigger = "availableNow") const {
    ManyConfig config;
    config.shared_options = testing::BackendOptions(db_->path(), served_)
                                .MergedWith(Options{{"sourceTimeZone", "UTC"}});
    for (const auto& ci : tables) config.tables.push_back({ci, Options{}});
    config.target = dir_.File("bronze_{ci}");
    config.app_id = "{ci}-v1";
    config.checkpoint = dir_.File("checkpoints/{ci}");
    config.stream_params = Options{{"facts_table", Facts()}, {"trigger", trigger}};
    config.control_table = dir_.File("control");
    return config;
  }

  std::string Facts() const { return dir_.File("facts"); }
  std::string Bronze(const std::string& ci) const { return dir_.File("bronze_" + ci); }
  std::string Checkpoint(const std::string& ci) const { return dir_.File("checkpoints/" + ci); }

  std::multiset<ChangeKey> BronzeChanges(const std::string& ci) const {
    auto table = delta::DeltaTable::Open(Bronze(ci)).Read();
    const auto lsn = StringColumn(table, "_start_lsn");
    const auto seq = StringColumn(table, "_seqval");
    const auto op = Int64Column(table, "_operation");
    std::multiset<ChangeKey> keys;
    for (std::size_t i = 0; i < lsn.size(); ++i) {
      if (op[i] != 0) keys.emplace(*lsn[i], seq[i].value_or(""), static_cast<int>(op[i]));
    }
    return keys;
  }
  std::multiset<ChangeKey> SourceChanges(const std::string& ci) const {
    std::multiset<ChangeKey> keys;
    for (const auto& row : db_->ChangeRows(ci)) {
      keys.emplace(row.start_lsn.ToString(), row.seqval.ToString(), row.operation);
    }
    return keys;
  }

  // Waits until `done` holds, checking every 10 ms; false after `limit`.
  static bool WaitFor(const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Every stream's last end LSN equals the database's max LSN.
  static bool CaughtUp(const StreamGroup& group, const std::string& ci, const Lsn& max) {
    const auto progress = group.streams().at(ci)->progress();
    return progress.end && progress.end->lsn == max;
  }

  TempDir dir_;
  std::unique_ptr<sim::SimDatabase> db_;
  mutable std::unique_ptr<testing::ServedSim> served_;
};

TEST(ExpandTemplateTest, ReplacesEveryPlaceholder) {
  EXPECT_EQ(ExpandTemplate("lake/{ci}/x_{ci}", "target", "dbo_a"), "lake/dbo_a/x_dbo_a");
  EXPECT_EQ(ExpandTemplate("{ci}", "app_id", "dbo_a"), "dbo_a");
}

TEST(ExpandTemplateTest, RefusesAPatternWithoutThePlaceholderNamingTheParameter) {
  try {
    ExpandTemplate("lake/bronze/{CI}", "checkpoint", "dbo_a");
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("{ci}"), std::string::npos) << e.what();
  }
}

TEST_F(StreamGroupTest, TemplateWithoutPlaceholderIsRefusedBeforeAnythingStarts) {
  Work(20, 1);
  for (const char* parameter : {"target", "app_id", "checkpoint"}) {
    ManyConfig config = Config();
    if (std::string(parameter) == "target") config.target = dir_.File("bronze");
    if (std::string(parameter) == "app_id") config.app_id = "shop-v1";
    if (std::string(parameter) == "checkpoint") config.checkpoint = dir_.File("checkpoints/all");
    try {
      StreamGroup::StartMany(config);
      FAIL() << parameter << ": no ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(parameter), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(Facts()));
  EXPECT_FALSE(fs::exists(dir_.File("control")));
  EXPECT_FALSE(fs::exists(dir_.File("checkpoints")));
  for (const auto& ci : kTables) EXPECT_FALSE(fs::exists(Bronze(ci))) << ci;
}

TEST_F(StreamGroupTest, BadOptionOfTheLastTableIsRefusedBeforeAnythingStarts) {
  Work(20, 2);
  ManyConfig config = Config();
  config.tables.back().options = Options{{"maxCommitsPerBatch", "0"}};
  try {
    StreamGroup::StartMany(config);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dbo_order_items"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("maxCommitsPerBatch"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(Facts()));
  EXPECT_FALSE(fs::exists(Bronze("dbo_customers")));
}

TEST_F(StreamGroupTest, SharedOnlyParameterPerTableAndDuplicateTablesAreRefused) {
  ManyConfig per_table_facts = Config();
  per_table_facts.tables[1].options = Options{{"FACTS_TABLE", dir_.File("other")}};
  EXPECT_THROW(StreamGroup::StartMany(per_table_facts), ConfigError);

  ManyConfig twice = Config({"dbo_orders", "DBO_ORDERS"});
  EXPECT_THROW(StreamGroup::StartMany(twice), ConfigError);
  EXPECT_FALSE(fs::exists(Facts()));
}

TEST_F(StreamGroupTest, PerTableOverridesMatchIgnoringCase) {
  Work(60, 3);
  ManyConfig config = Config();
  config.shared_options = config.shared_options.MergedWith(Options{{"maxCommitsPerBatch", "1000"}});
  // Another capitalisation of the shared option, and a captureInstance that must be ignored.
  config.tables[1].options = Options{{"MAXCOMMITSPERBATCH", "10"}, {"captureinstance", "dbo_customers"}};
  auto group = StreamGroup::StartMany(config);
  EXPECT_TRUE(group->AwaitAll().empty());

  // dbo_orders' range holds every lsn_time_mapping entry from its capture instance's start.
  const Lsn orders_min = db_->MinLsn("dbo_orders");
  std::int64_t commits = 0;
  for (const auto& entry : db_->LsnTimeMapping()) commits += entry.start_lsn >= orders_min ? 1 : 0;
  ASSERT_GT(commits, 20);
  EXPECT_EQ(group->streams().at("dbo_orders")->progress().batches, (commits + 9) / 10);
  EXPECT_EQ(group->streams().at("dbo_customers")->progress().batches, 1);
  EXPECT_EQ(group->streams().at("dbo_order_items")->progress().batches, 1);
  for (const auto& ci : kTables) EXPECT_EQ(BronzeChanges(ci), SourceChanges(ci)) << ci;
  EXPECT_EQ(group->order(), kTables);
}

TEST_F(StreamGroupTest, FactsTableIsCreatedOnceAndShared) {
  Work(40, 4);
  // Prepare reads every table's source and writes nothing; Start creates both tables before
  // any stream starts.
  auto group = StreamGroup::Prepare(Config());
  EXPECT_FALSE(fs::exists(Facts()));
  EXPECT_FALSE(fs::exists(dir_.File("control")));
  for (const auto& ci : kTables) EXPECT_FALSE(fs::exists(Bronze(ci))) << ci;
  group->Start();
  EXPECT_TRUE(group->AwaitAll().empty());

  // One metaData action in the whole log: the table was created once, by the group.
  int metadata_actions = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(Facts()) / "_delta_log")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      metadata_actions += line.rfind("{\"metaData\"", 0) == 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(metadata_actions, 1);

  auto facts = delta::DeltaTable::Open(Facts()).Read();
  std::set<std::string> targets;
  for (const auto& t : StringColumn(facts, "target")) targets.insert(t.value_or(""));
  EXPECT_EQ(targets, (std::set<std::string>{Bronze("dbo_customers"), Bronze("dbo_orders"),
                                            Bronze("dbo_order_items")}));
  // Every table's verdict is tracked in the one control table.
  for (const auto& ci : kTables) EXPECT_TRUE(ReadVerdict(dir_.File("control"), Bronze(ci))) << ci;
}

TEST_F(StreamGroupTest, ManyStreamsShareAFewSourcesThreadsAndCommits) {
  Work(30, 6);
  std::vector<std::string> tables = kTables;
  for (int t = 0; t < 40; ++t) {
    sim::TableDef table;
    table.name = sim::TableName{"dbo", "many" + std::to_string(t)};
    table.columns = {sim::ParseColumnDeclaration("id int not null"),
                     sim::ParseColumnDeclaration("note nvarchar(20)")};
    table.primary_key = {"id"};
    db_->CreateTable(table);
    tables.push_back(db_->EnableCdc(table.name));
  }
  for (int t = 0; t < 40; ++t) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    txn->InsertMany(sim::TableName{"dbo", "many" + std::to_string(t)},
                    {{{"id", 1}, {"note", "a"}}, {{"id", 2}, {"note", "b"}}});
    txn->Commit();
  }
  ManyConfig config = Config(tables);
  config.limits.connections = 2;
  config.limits.workers = 2;
  auto group = StreamGroup::StartMany(config);
  EXPECT_TRUE(group->AwaitAll().empty());
  EXPECT_EQ(group->worker_threads(), 2);
  EXPECT_LE(group->most_open_sources(), 2);
  if (served_) {
    EXPECT_LE(served_->logins(), 2 * testing::ConnectionsPerSource());
  }
  std::int64_t batches = 0;
  for (const auto& ci : tables) {
    EXPECT_EQ(BronzeChanges(ci), SourceChanges(ci)) << ci;
    batches += group->streams().at(ci)->progress().batches;
  }
  // One facts row per batch, through the shared appender.
  EXPECT_EQ(delta::DeltaTable::Open(Facts()).Read()->num_rows(), batches);
  for (const auto& ci : tables) EXPECT_TRUE(ReadVerdict(dir_.File("control"), Bronze(ci))) << ci;
}

TEST_F(StreamGroupTest, AMissingCaptureInstanceIsRefusedBeforeAnythingIsWritten) {
  Work(20, 5);
  ManyConfig config = Config({"dbo_customers", "dbo_missing", "dbo_orders"}, "processingTime=20 ms");
  try {
    StreamGroup::StartMany(config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.code(), ErrorCode::kConfig);
    EXPECT_NE(std::string(e.what()).find("dbo_missing"), std::string::npos) << e.what();
  }
  for (const auto& ci : kTables) {
    EXPECT_FALSE(fs::exists(Bronze(ci))) << ci;
    EXPECT_FALSE(fs::exists(Checkpoint(ci))) << ci;
  }
  EXPECT_FALSE(fs::exists(Facts()));
}

TEST_F(StreamGroupTest, StartFailureStopsTheStartedStreamsAndThrows) {
  Work(20, 5);
  // processingTime: the first stream would run until stopped.
  ManyConfig config = Config(kTables, "processingTime=20 ms");
  auto group = StreamGroup::Prepare(config);
  // The second table's target becomes unusable after the checks: only its start can fail.
  fs::create_directories(fs::path(Bronze("dbo_orders")).parent_path());
  std::ofstream(Bronze("dbo_orders")) << "not a table";
  try {
    group->Start();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dbo_orders"), std::string::npos) << e.what();
  }
  // The first stream had started, and stopped: new changes reach it no more.
  ASSERT_TRUE(fs::exists(Bronze("dbo_customers")));
  const auto before = BronzeChanges("dbo_customers");
  Work(20, 6);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(BronzeChanges("dbo_customers"), before);
  EXPECT_NE(SourceChanges("dbo_customers"), before);
  // The one after the failure never started.
  EXPECT_FALSE(fs::exists(Checkpoint("dbo_order_items")));
  EXPECT_FALSE(fs::exists(Bronze("dbo_order_items")));
}

TEST_F(StreamGroupTest, DroppedCaptureInstanceFailsItsStreamAlone) {
  Work(30, 7);
  auto group = StreamGroup::StartMany(Config(kTables, "processingTime=20 ms"));
  const Lsn first_max = *db_->MaxLsn();
  for (const auto& ci : kTables) {
    ASSERT_TRUE(WaitFor([&] { return CaughtUp(*group, ci, first_max); })) << ci;
  }

  db_->DisableCdc("dbo_orders");
  Work(30, 8, {sim::ParseTableName("dbo.customers"), sim::ParseTableName("dbo.order_items")});
  const Lsn second_max = *db_->MaxLsn();
  ASSERT_TRUE(WaitFor([&] { return !group->streams().at("dbo_orders")->active(); }));
  for (const auto& ci : {"dbo_customers", "dbo_order_items"}) {
    ASSERT_TRUE(WaitFor([&] { return CaughtUp(*group, ci, second_max); })) << ci;
    EXPECT_TRUE(group->streams().at(ci)->active()) << ci;
  }

  group->StopAll();
  const auto failed = group->AwaitAll();
  ASSERT_EQ(failed.size(), 1u);
  ASSERT_EQ(failed.count("dbo_orders"), 1u);
  EXPECT_THROW(std::rethrow_exception(failed.at("dbo_orders")), Error);
  for (const auto& ci : {"dbo_customers", "dbo_order_items"}) {
    EXPECT_EQ(BronzeChanges(ci), SourceChanges(ci)) << ci;
    EXPECT_FALSE(group->streams().at(ci)->error()) << ci;
  }
}

TEST_F(StreamGroupTest, AwaitAllWithTimeoutLeavesRunningStreamsOut) {
  Work(10, 9);
  auto group = StreamGroup::StartMany(Config(kTables, "processingTime=20 ms"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(group->AwaitAll(std::chrono::milliseconds(150)).empty());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(140));
  EXPECT_LT(waited, std::chrono::seconds(5));
  for (const auto& ci : kTables) EXPECT_TRUE(group->streams().at(ci)->active()) << ci;

  group->StopAll();
  for (const auto& ci : kTables) EXPECT_FALSE(group->streams().at(ci)->active()) << ci;
  EXPECT_TRUE(group->AwaitAll().empty());
}

}  // namespace
}  // namespace mssql_cdc
