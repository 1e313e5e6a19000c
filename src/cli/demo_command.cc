// `mssql-cdc demo`: the main job on the embedded simulated SQL Server, end to end.
//
// It creates a database with customers, orders and order_items under a running workload,
// runs every table's stream into bronze Delta tables with availableNow and bootstrap (one
// run of the fan-out), runs them again to pick up what the workload wrote meanwhile, and then
// reads the bronze, facts and control tables back and checks bronze against the change
// tables. It fails loudly when they differ.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <arrow/api.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/errors.h"
#include "delta/table.h"
#include "engine/finalization.h"
#include "fleet/stream_group.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "sim/workload.h"

namespace mssql_cdc::cli {
namespace {

namespace fs = std::filesystem;

struct DemoSettings {
  std::string dir = "demo-output";
  double seconds = 6;
  double tps = 150;
  int statements = 3;
  std::uint64_t seed = 7;
  std::string time_zone = "E. South America Standard Time";
};

struct Layout {
  fs::path root, db, lake, checkpoints;
  std::string facts() const { return (lake / "ops" / "ingestion_facts").string(); }
  std::string control() const { return (lake / "ops" / "table_finalization").string(); }
  std::string bronze(const std::string& ci) const { return (lake / "bronze" / ci).string(); }
};

Layout FreshLayout(const std::string& dir) {
  Layout l;
  l.root = fs::absolute(dir);
  l.db = l.root / "sales.sim";
  l.lake = l.root / "lake";
  l.checkpoints = l.root / "checkpoints";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(l.db.string() + suffix);
  fs::remove_all(l.lake);
  fs::remove_all(l.checkpoints);
  fs::create_directories(l.root);
  return l;
}

ManyConfig DemoPipeline(const Layout& l, const std::vector<std::string>& instances) {
  ManyConfig config;
  config.shared_options = Options{{"backend", "sim"}, {"simPath", l.db.string()}};
  for (const auto& ci : instances) config.tables.push_back({ci, Options{}});
  config.target = (l.lake / "bronze" / "{ci}").string();
  config.app_id = "{ci}-v1";
  config.checkpoint = (l.checkpoints / "{ci}").string();
  config.stream_params = Options{{"facts_table", l.facts()}, {"trigger", "availableNow"},
                                 {"bootstrap", "true"}};
  config.control_table = l.control();
  return config;
}

// Runs every stream once with availableNow and prints what each did.
void RunOnce(const ManyConfig& config, const char* title) {
  const auto start = std::chrono::steady_clock::now();
  auto group = StreamGroup::StartMany(config);
  auto failed = group->AwaitAll();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n%s (%.2f s)\n", title, seconds);
  std::printf("  %-16s %8s %10s  %s\n", "capture instance", "batches", "changes", "end offset");
  for (const auto& ci : group->order()) {
    const Stream& stream = *group->streams().at(ci);
    const StreamProgress p = stream.progress();
    std::printf("  %-16s %8lld %10lld  %s\n", ci.c_str(), static_cast<long long>(p.batches),
                static_cast<long long>(p.total_rows),
                p.end ? p.end->ToJson().c_str() : "(none)");
  }
  if (!failed.empty()) {
    for (const auto& [ci, error] : failed) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "  %s failed: %s\n", ci.c_str(), e.what());
      }
    }
    throw SourceError("the demo's streams failed: see above");
  }
}

// Operation -> rows of a bronze table, and the snapshot LSN its bootstrap stamped.
struct BronzeSummary {
  std::map<int, std::int64_t> ops;
  std::set<std::string> change_keys;  // (start_lsn, seqval, operation) of change rows
  std::string snapshot_lsn;
};

BronzeSummary SummarizeBronze(const std::string& uri) {
  BronzeSummary s;
  auto table = delta::DeltaTable::Open(uri).Read();
  auto combined = table->CombineChunks().ValueOrDie();
  auto op = std::static_pointer_cast<arrow::Int32Array>(combined->GetColumnByName("_operation")->chunk(0));
  auto lsn = std::static_pointer_cast<arrow::StringArray>(combined->GetColumnByName("_start_lsn")->chunk(0));
  auto seq = std::static_pointer_cast<arrow::StringArray>(combined->GetColumnByName("_seqval")->chunk(0));
  for (std::int64_t i = 0; i < combined->num_rows(); ++i) {
    ++s.ops[op->Value(i)];
    if (op->Value(i) == 0) {
      s.snapshot_lsn = std::string(lsn->GetView(i));
    } else {
      s.change_keys.insert(std::string(lsn->GetView(i)) + "/" + std::string(seq->GetView(i)) +
                           "/" + std::to_string(op->Value(i)));
    }
  }
  return s;
}

int RunDemo(const DemoSettings& settings) {
  const Layout layout = FreshLayout(settings.dir);
  sim::CreateOptions create;
  create.database_name = "sales";
  create.time_zone = settings.time_zone;
  auto db = sim::SimDatabase::Create(layout.db.string(), create);
  sim::CreateDemoSchema(*db);
  std::vector<std::string> instances;
  for (const auto& ci : db->CaptureInstances()) instances.push_back(ci.name);
  std::cout << "Simulated SQL Server: " << layout.db.string() << " (server clock "
            << db->time_zone() << ")\n";

  // Rows for the bootstrap to find, then a workload that keeps writing during the first run.
  sim::WorkloadOptions seed_rows;
  seed_rows.transactions_per_second = 100000;
  seed_rows.transactions = 300;
  seed_rows.statements_per_transaction = settings.statements;
  seed_rows.mix = sim::OperationMix::Parse("insert=1");
  seed_rows.seed = settings.seed;
  sim::Workload(*db, seed_rows).Run();

  std::exception_ptr workload_error;
  std::thread writer([&] {
    try {
      auto writer_db = sim::SimDatabase::Open(layout.db.string());
      sim::WorkloadOptions options;
      options.transactions_per_second = settings.tps;
      options.duration_seconds = settings.seconds;
      options.statements_per_transaction = settings.statements;
      options.seed = settings.seed + 1;
      sim::Workload(*writer_db, options).Run();
    } catch (...) {
      workload_error = std::current_exception();
    }
  });
  std::cout << "Workload: " << settings.tps << " transactions/s for " << settings.seconds
            << " s on dbo.customers, dbo.orders, dbo.order_items\n";

  const ManyConfig config = DemoPipeline(layout, instances);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  RunOnce(config, "Run 1: bootstrap, then availableNow while the workload writes");
  writer.join();
  if (workload_error) std::rethrow_exception(workload_error);
  RunOnce(config, "Run 2: availableNow picks up what the workload wrote meanwhile");

  std::printf("\nTables\n  %-16s %9s %9s %9s %9s %9s  %-9s %s\n", "bronze", "snapshot",
              "deletes", "inserts", "upd.bef.", "upd.aft.", "check", "finalized_until");
  bool all_equal = true;
  for (const auto& ci : instances) {
    const BronzeSummary bronze = SummarizeBronze(layout.bronze(ci));
    std::set<std::string> expected;
    for (const auto& row : db->ChangeRows(ci)) {
      if (bronze.snapshot_lsn.empty() || row.start_lsn.ToString() > bronze.snapshot_lsn) {
        expected.insert(row.start_lsn.ToString() + "/" + row.seqval.ToString() + "/" +
                        std::to_string(row.operation));
      }
    }
    const bool equal = expected == bronze.change_keys;
    all_equal = all_equal && equal;
    auto verdict = ReadVerdict(layout.control(), layout.bronze(ci));
    auto count = [&](int op) {
      auto it = bronze.ops.find(op);
      return static_cast<long long>(it == bronze.ops.end() ? 0 : it->second);
    };
    std::printf("  %-16s %9lld %9lld %9lld %9lld %9lld  %-9s %s\n", ci.c_str(), count(0), count(1),
                count(2), count(3), count(4), equal ? "= source" : "DIFFERS",
                verdict ? FormatIsoMillis(verdict->finalized_until.value).c_str() : "(none)");
  }
  auto facts = delta::DeltaTable::Open(layout.facts()).Read();
  std::printf("\nFacts: %lld rows in %s\nVerdicts: %s\nBronze tables: %s\n",
              static_cast<long long>(facts->num_rows()), layout.facts().c_str(),
              layout.control().c_str(), (layout.lake / "bronze").string().c_str());
  std::printf("Read them with any Delta reader, e.g. python -c \"import deltalake; "
              "print(deltalake.DeltaTable('%s').to_pyarrow_table().num_rows)\"\n",
              layout.bronze(instances.front()).c_str());
  if (!all_equal) {
    std::cerr << "demo: a bronze table differs from its change table\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto settings = std::make_shared<DemoSettings>();
  CLI::App* demo = app.add_subcommand("demo", "Run the main job on the embedded simulated SQL Server");
  demo->add_option("--dir", settings->dir, "Where the demo writes its output")->capture_default_str();
  demo->add_option("--seconds", settings->seconds, "How long the workload runs")
      ->check(PositiveNumber("seconds"))->capture_default_str();
  demo->add_option("--tps", settings->tps, "Workload transactions per second")
      ->check(PositiveNumber("transactions per second"))->capture_default_str();
  demo->add_option("--statements", settings->statements, "Statements per transaction")
      ->check(PositiveNumber("statements"))->capture_default_str();
  demo->add_option("--seed", settings->seed, "Workload seed")->capture_default_str();
  demo->add_option("--time-zone", settings->time_zone, "Windows time zone of the server clock")
      ->capture_default_str();
  demo->callback([settings] {
    int rc = RunDemo(*settings);
    if (rc != kExitOk) ExitWith(rc);
  });
}

}  // namespace mssql_cdc::cli
