// One schema, one meaning: the same streams over the same sim database, read once by the sim
// backend directly and once by the odbc backend through unixODBC, FreeTDS and `sim serve`,
// write identical bronze tables, row for row and value for value (bootstrap snapshot included).
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delta/table.h"
#include "engine/stream.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "sim/workload.h"
#include "tests/testing/served_sim.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using testing::ServedSim;
using testing::TempDir;

// Bronze in a canonical order: by change identity, then by every output column, so two
// tables with the same rows compare equal whatever order their files were written in.
std::shared_ptr<arrow::Table> Sorted(const std::shared_ptr<arrow::Table>& table) {
  std::vector<arrow::compute::SortKey> keys;
  for (const auto& field : table->schema()->fields()) {
    if (field->type()->id() == arrow::Type::BINARY) continue;  // not sortable; compared anyway
    keys.emplace_back(field->name());
  }
  auto indices =
      arrow::compute::SortIndices(arrow::Datum(table), arrow::compute::SortOptions(keys))
          .ValueOrDie();
  return arrow::compute::Take(table, indices).ValueOrDie().table()->CombineChunks().ValueOrDie();
}

class BackendParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 00:00:00")};
    options.time_zone = "W. Europe Standard Time";
    db_ = sim::SimDatabase::Create(dir_.File("shop.sim"), options);
    sim::CreateDemoSchema(*db_);
    Work(40, 7);
  }

  void Work(std::int64_t transactions, std::uint64_t seed) {
    sim::WorkloadOptions work;
    work.transactions = transactions;
    work.transactions_per_second = 20;
    work.statements_per_transaction = 3;
    work.seed = seed;
    sim::Workload(*db_, work).Run();
  }

  // Runs one availableNow stream of `instance` into `<backend>_<instance>`.
  void Run(const std::string& instance, const Options& backend, bool bootstrap) {
    StreamConfig config;
    config.source = SourceOptions::Parse(backend.MergedWith(
        Options{{"captureInstance", instance}, {"maxCommitsPerBatch", "7"}}));
    const std::string name = std::string(BackendName(config.source.backend)) + "_" + instance;
    config.params.target = dir_.File("bronze_" + name);
    config.params.app_id = name;
    config.params.checkpoint = dir_.File("checkpoint_" + name);
    config.params.trigger = Trigger::AvailableNow();
    config.params.bootstrap = bootstrap;
    Stream(std::move(config), nullptr).Run();
  }

  std::shared_ptr<arrow::Table> Bronze(const std::string& backend, const std::string& instance) {
    return delta::DeltaTable::Open(dir_.File("bronze_" + backend + "_" + instance)).Read();
  }

  TempDir dir_;
  std::unique_ptr<sim::SimDatabase> db_;
};

TEST_F(BackendParityTest, SimAndOdbcWriteTheSameBronze) {
  ServedSim served(db_->path());
  const Options sim_backend{{"backend", "sim"}, {"simPath", db_->path()}};
  const Options odbc_backend = served.SourceOptionsText();
  const std::vector<std::string> instances = {"dbo_customers", "dbo_orders", "dbo_order_items"};
  for (const auto& instance : instances) {
    Run(instance, sim_backend, /*bootstrap=*/true);
    Run(instance, odbc_backend, /*bootstrap=*/true);
  }
  Work(30, 8);  // a second run of each picks up changes made after the first
  for (const auto& instance : instances) {
    Run(instance, sim_backend, false);
    Run(instance, odbc_backend, false);
  }
  for (const auto& instance : instances) {
    const auto sim_bronze = Sorted(Bronze("sim", instance));
    const auto odbc_bronze = Sorted(Bronze("odbc", instance));
    ASSERT_GT(sim_bronze->num_rows(), 40) << instance;
    ASSERT_TRUE(sim_bronze->schema()->Equals(*odbc_bronze->schema(), /*check_metadata=*/true))
        << instance << "\nsim:  " << sim_bronze->schema()->ToString()
        << "\nodbc: " << odbc_bronze->schema()->ToString();
    EXPECT_TRUE(sim_bronze->Equals(*odbc_bronze)) << instance;
  }
}

}  // namespace
}  // namespace mssql_cdc
