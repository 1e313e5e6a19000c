// `mssql-cdc demo`: the main job on the embedded simulated SQL Server. It creates a database
// with three CDC-tracked tables, runs a workload on it in the background, and meanwhile reads
// every capture instance through the Source interface the way a stream does: from the last
// offset to the max LSN, over and over, until the workload ends and everything is read. It
// then checks that what it read equals the change tables.
#include <arrow/array.h>
#include <arrow/record_batch.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "cli/commands.h"
#include "core/errors.h"
#include "core/timezone.h"
#include "sim/database.h"
#include "sim/demo_schema.h"
#include "sim/workload.h"
#include "source/sim_source.h"
#include "source/source_clock.h"

namespace mssql_cdc::cli {
namespace {

struct DemoSettings {
  std::string dir = "demo-output";
  double seconds = 5;
  double tps = 200;
  int statements = 3;
  std::uint64_t seed = 7;
  std::string time_zone = "E. South America Standard Time";
};

// What one capture instance's reader has seen so far.
struct InstanceProgress {
  Lsn offset;                       // last LSN read up to
  std::map<int, std::int64_t> ops;  // operation -> rows
  std::int64_t rows = 0;
  std::int64_t batches = 0;
  std::int64_t reads = 0;
  double read_seconds = 0;
};

void RemoveDatabaseFiles(const std::filesystem::path& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(db.string() + suffix);
  }
}

// Reads (progress.offset, to] and counts it.
void ReadRange(Source& source, const SourceClock& clock, const std::string& capture_instance,
               const Lsn& to, InstanceProgress& progress) {
  if (to <= progress.offset) return;
  ChangeReadRequest request;
  request.capture_instance = capture_instance;
  request.from = progress.offset.Increment();
  request.to = to;
  const auto start = std::chrono::steady_clock::now();
  auto reader = source.ReadChanges(request, clock);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    arrow::Status status = reader->ReadNext(&batch);
    if (!status.ok()) throw SourceError("reading " + capture_instance + ": " + status.ToString());
    if (!batch) break;
    auto ops = std::static_pointer_cast<arrow::Int32Array>(batch->GetColumnByName("_operation"));
    for (std::int64_t i = 0; i < ops->length(); ++i) ++progress.ops[ops->Value(i)];
    progress.rows += batch->num_rows();
    ++progress.batches;
  }
  progress.read_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++progress.reads;
  progress.offset = to;
}

int RunDemo(const DemoSettings& settings) {
  namespace fs = std::filesystem;
  fs::create_directories(settings.dir);
  const fs::path db_path = fs::absolute(fs::path(settings.dir) / "sales.sim");
  RemoveDatabaseFiles(db_path);

  sim::CreateOptions create;
  create.database_name = "sales";
  create.time_zone = settings.time_zone;
  auto db = sim::SimDatabase::Create(db_path.string(), create);
  sim::CreateDemoSchema(*db);
  std::cout << "Created the simulated SQL Server database " << db_path.string() << "\n"
            << "  server clock: " << db->time_zone() << "; CDC on dbo.customers, dbo.orders, "
            << "dbo.order_items\n"
            << "Running a workload for " << settings.seconds << " s at " << settings.tps
            << " transactions/s (" << settings.statements
            << " statements each) while reading every capture instance...\n";

  std::atomic<bool> workload_done{false};
  sim::WorkloadReport workload_report;
  std::exception_ptr workload_error;
  std::thread writer([&] {
    try {
      auto writer_db = sim::SimDatabase::Open(db_path.string());
      sim::WorkloadOptions options;
      options.transactions_per_second = settings.tps;
      options.duration_seconds = settings.seconds;
      options.statements_per_transaction = settings.statements;
      options.seed = settings.seed;
      workload_report = sim::Workload(*writer_db, options).Run();
    } catch (...) {
      workload_error = std::current_exception();
    }
    workload_done = true;
  });

  auto source = OpenSimSource(db_path.string());
  const SourceClock clock = ResolveSourceClock(*source, "auto");
  std::map<std::string, InstanceProgress> progress;
  for (const auto& ci : source->ListCaptureInstances()) {
    progress[ci.name].offset = source->MinLsn(ci.name).Decrement();
  }
  const auto started = std::chrono::steady_clock::now();
  auto read_up_to_max = [&] {
    auto max_lsn = source->MaxLsn();
    if (!max_lsn) return;
    for (auto& [name, p] : progress) ReadRange(*source, clock, name, *max_lsn, p);
  };
  while (!workload_done) {
    read_up_to_max();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  writer.join();
  if (workload_error) std::rethrow_exception(workload_error);
  read_up_to_max();  // the tail the workload wrote after the last poll
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::cout << "Workload: " << workload_report.transactions << " transactions, "
            << workload_report.inserts << " inserts, " << workload_report.updates
            << " updates, " << workload_report.deletes << " deletes\n\n";
  std::printf("%-18s %9s %9s %9s %9s %9s %7s %9s %12s\n", "capture instance", "changes",
              "deletes", "inserts", "upd.before", "upd.after", "reads", "read ms", "rows/s");
  bool all_match = true;
  for (auto& [name, p] : progress) {
    const auto expected = db->OperationCounts(name);
    const bool match = expected == p.ops || (expected.empty() && p.ops.empty());
    all_match = all_match && match;
    std::printf("%-18s %9lld %9lld %9lld %9lld %9lld %7lld %9.1f %12.0f %s\n", name.c_str(),
                static_cast<long long>(p.rows), static_cast<long long>(p.ops[1]),
                static_cast<long long>(p.ops[2]), static_cast<long long>(p.ops[3]),
                static_cast<long long>(p.ops[4]), static_cast<long long>(p.reads),
                p.read_seconds * 1000, p.read_seconds > 0 ? p.rows / p.read_seconds : 0.0,
                match ? "= change table" : "DIFFERS from the change table");
  }
  std::cout << "\nRead for " << wall << " s, up to max LSN "
            << (source->MaxLsn() ? source->MaxLsn()->ToString() : std::string("(none)"))
            << "; commit times converted to UTC from " << clock.name() << ".\n"
            << "Output: " << db_path.string() << "\n"
            << "  inspect it: build/mssql-cdc sim info --db " << db_path.string() << "\n";
  if (!all_match) {
    std::cerr << "demo: the changes read differ from the change tables\n";
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
      ->check(CLI::PositiveNumber)->capture_default_str();
  demo->add_option("--tps", settings->tps, "Workload transactions per second")
      ->check(CLI::PositiveNumber)->capture_default_str();
  demo->add_option("--statements", settings->statements, "Statements per transaction")
      ->check(CLI::PositiveNumber)->capture_default_str();
  demo->add_option("--seed", settings->seed, "Workload seed")->capture_default_str();
  demo->add_option("--time-zone", settings->time_zone, "Windows time zone of the server clock")
      ->capture_default_str();
  demo->callback([settings] {
    int rc = RunDemo(*settings);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace mssql_cdc::cli
