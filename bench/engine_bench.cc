// End-to-end engine throughput and the cost of many streams.
//
// (a) A backlog of N changes (narrow and wide tables) read by one stream with availableNow
//     from the simulator into a new bronze table (with a facts table), numPartitions 1 and 2:
//     change rows per second end to end.
//     The same through the odbc backend from a `mssql-cdc sim serve` child (the engine's TDS
//     reader), numPartitions 1: rows per CPU second of the engine's own process, the
//     server's CPU measured apart.
// (b) 100 streams in one process over 100 quiet tables (processingTime 200 ms): time to start
//     them all, resident memory once started, and the time until every stream has written
//     100 new changes made to each table.
//
// (c) With --store-uri, the narrow backlog of (a) again with bronze, facts and checkpoint in an
//     object store (s3://bucket/prefix), beside the local disk (bench/storage_bench.py runs it
//     against an S3 emulator).
//
//   build/bench/engine_bench --rows 2000000 --dir bench/out [--binary build/mssql-cdc]
//   build/bench/engine_bench --rows 200000 --dir bench/out --store-uri s3://bench/engine
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_process.h"
#include "bench_tables.h"
#include "core/errors.h"
#include "core/run_allocator.h"
#include "engine/stream.h"
#include "fleet/idle_trim.h"
#include "fleet/stream_group.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "storage/store.h"

namespace mssql_cdc::bench {
namespace {

namespace fs = std::filesystem;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// availableNow into bronze, checkpoint and facts under `out` (a directory or a store's URI).
StreamParams BenchParams(const std::string& out) {
  return StreamParams::Parse(Options{{"target", out + "/bronze"},
                                     {"app_id", "bench"},
                                     {"checkpoint", out + "/checkpoint"},
                                     {"facts_table", out + "/facts"},
                                     {"trigger", "availableNow"}});
}

// One availableNow run of the shape's backlog into a fresh bronze table, under `dir`, or under
// `store_uri` (a new prefix per run) when one is given.
void EndToEnd(const BenchShape& shape, std::int64_t rows, const std::string& dir, int partitions,
              const std::string& store_uri = "") {
  const std::string db = PrepareBenchDatabase(shape, rows, dir);
  const std::string name = "engine_bench_" + shape.name + "_p" + std::to_string(partitions);
  const fs::path local = fs::path(dir) / name;
  fs::remove_all(local);
  const std::string out =
      store_uri.empty()
          ? local.string()
          : store_uri + "/" + name + "_" +
                std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  StreamConfig config;
  config.source = SourceOptions::Parse(Options{{"backend", "sim"},
                                               {"simPath", db},
                                               {"captureInstance", shape.table.name.DefaultCaptureInstance()},
                                               {"numPartitions", std::to_string(partitions)}});
  config.params = BenchParams(out);
  Stream stream(config, MakeSourceFactory(config.source));
  ReleaseFreeMemory();
  ResetPeakRss();
  const auto start = std::chrono::steady_clock::now();
  const StreamProgress progress = stream.Run();
  const double seconds = Seconds(start);
  if (progress.total_rows != rows) {
    throw InternalError("the stream wrote " + std::to_string(progress.total_rows) + " rows, expected " +
                        std::to_string(rows));
  }
  std::printf("| %s | %s | %zu | %lld | %d | %.2f | %.0f | %.0f | %.0f |\n", shape.name.c_str(),
              store_uri.empty() ? "local disk" : store_uri.c_str(), shape.table.columns.size(),
              static_cast<long long>(rows), partitions, seconds, rows / seconds,
              rows / seconds / partitions, PeakRssMb());
  std::fflush(stdout);
  fs::remove_all(local);
}

// One availableNow run of the shape's backlog through sim serve: the engine's CPU per row.
void EndToEndServed(const BenchShape& shape, std::int64_t rows, const std::string& dir,
                    const std::string& binary) {
  constexpr char kUser[] = "engine_bench";
  constexpr char kPassword[] = "Engine-bench-1";
  const std::string db = PrepareBenchDatabase(shape, rows, dir);
  std::string database;
  {
    auto sim_db = sim::SimDatabase::Open(db);
    if (!sim_db->Authenticate(kUser, kPassword)) sim_db->AddLogin(kUser, kPassword, true);
    database = sim_db->database_name();
  }
  const std::string out = (fs::path(dir) / ("engine_bench_served_" + shape.name)).string();
  fs::remove_all(out);
  fs::create_directories(out);
  const ServedChild server = ServeSim(binary, db, out);
  StreamConfig config;
  config.source = SourceOptions::Parse(Options{
      {"backend", "odbc"},
      {"connectionString", "Server=127.0.0.1," + std::to_string(server.port) + ";Database=" + database +
                               ";Encrypt=no"},
      {"user", kUser},
      {"password", kPassword},
      {"changeReader", "tds"},
      {"sourceTimeZone", "UTC"},
      {"captureInstance", shape.table.name.DefaultCaptureInstance()},
      {"numPartitions", "1"}});
  config.params = BenchParams(out);
  Stream stream(config, MakeSourceFactory(config.source));
  // What an earlier run of this process left to the allocators is not this run's.
  ReleaseFreeMemory();
  ResetPeakRss();
  const double cpu_before = CpuSeconds();
  const double server_before = ProcessCpuSeconds(server.pid);
  const auto start = std::chrono::steady_clock::now();
  const StreamProgress progress = stream.Run();
  const double seconds = Seconds(start);
  const double engine_cpu = CpuSeconds() - cpu_before;
  const double server_cpu = ProcessCpuSeconds(server.pid) - server_before;
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  if (progress.total_rows != rows) {
    throw InternalError("the stream wrote " + std::to_string(progress.total_rows) + " rows, expected " +
                        std::to_string(rows));
  }
  std::printf("| %s | %lld | %.2f | %.0f | %.2f | %.0f | %.2f | %.0f |\n", shape.name.c_str(),
              static_cast<long long>(rows), seconds, rows / seconds, engine_cpu, rows / engine_cpu,
              server_cpu, PeakRssMb());
  std::fflush(stdout);
  if (!std::getenv("ENGINE_BENCH_KEEP")) fs::remove_all(out);
}

void ManyStreams(int tables, const std::string& dir) {
  const fs::path out = fs::path(dir) / "engine_bench_many";
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string db_path = (out / "quiet.sim").string();
  auto db = sim::SimDatabase::Create(db_path);
  ManyConfig config;
  for (int t = 0; t < tables; ++t) {
    sim::TableDef table;
    table.name = sim::TableName{"dbo", "quiet" + std::to_string(t)};
    table.columns = {sim::ParseColumnDeclaration("id int not null"),
                     sim::ParseColumnDeclaration("note nvarchar(40)")};
    table.primary_key = {"id"};
    db->CreateTable(table);
    config.tables.push_back({db->EnableCdc(table.name), Options{}});
  }
  config.shared_options = Options{{"backend", "sim"}, {"simPath", db_path}, {"numPartitions", "1"}};
  config.target = (out / "bronze" / "{ci}").string();
  config.app_id = "{ci}";
  config.checkpoint = (out / "checkpoints" / "{ci}").string();
  config.stream_params = Options{{"facts_table", (out / "facts").string()},
                                 {"trigger", "processingTime=200 milliseconds"}};
  const std::int64_t rss_before = ResidentBytes();
  const auto start = std::chrono::steady_clock::now();
  auto group = StreamGroup::StartMany(config);
  const double start_seconds = Seconds(start);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::int64_t rss_started = ResidentBytes();

  constexpr int kChanges = 100;
  const auto write_start = std::chrono::steady_clock::now();
  for (int t = 0; t < tables; ++t) {
    auto txn = db->Begin();
    std::vector<sim::Row> rows;
    for (int i = 1; i <= kChanges; ++i) rows.push_back({{"id", i}, {"note", "n" + std::to_string(i)}});
    txn->InsertMany(sim::TableName{"dbo", "quiet" + std::to_string(t)}, std::move(rows));
    txn->Commit();
  }
  const double write_seconds = Seconds(write_start);
  while (true) {
    int done = 0;
    for (const auto& [ci, stream] : group->streams()) {
      if (stream->error()) std::rethrow_exception(stream->error());
      if (stream->progress().total_rows >= kChanges) ++done;
    }
    if (done == tables) break;
    if (Seconds(write_start) > 600) throw InternalError("streams did not catch up in 10 minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double catch_up_seconds = Seconds(write_start);
  const std::int64_t rss_peak = ResidentBytes();
  group->StopAll();
  std::printf("| %d | %.2f | %.0f | %.0f | %.1f | %.2f | %.2f |\n", tables, start_seconds,
              rss_started / 1e6, (rss_started - rss_before) / 1e6 / tables, rss_peak / 1e6,
              write_seconds, catch_up_seconds);
  group.reset();
  fs::remove_all(out);
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  // The memory settings `mssql-cdc run` uses, so that the figures are the command's.
  mssql_cdc::UseRunAllocator();
  CLI::App app{"End-to-end engine throughput and many streams"};
  std::int64_t rows = 2'000'000;
  std::int64_t wide_rows = 2'000'000;
  int tables = 100;
  std::string dir = "bench/out";
  std::string binary = "build/mssql-cdc";
  bool served_only = false;
  std::string store_uri;
  app.add_option("--rows", rows, "Backlog of the narrow table")->check(CLI::PositiveNumber);
  app.add_option("--wide-rows", wide_rows, "Backlog of the wide table")->check(CLI::PositiveNumber);
  app.add_option("--tables", tables, "Quiet tables for the many-streams run")->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where benchmark databases and tables are kept");
  app.add_option("--binary", binary, "The mssql-cdc executable that serves the odbc runs");
  app.add_flag("--served-only", served_only, "Only the runs through sim serve (for profiling)");
  app.add_option("--store-uri", store_uri,
                 "Only the narrow backlog, on the local disk and under this object-store URI");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    if (!store_uri.empty()) {
      std::printf("| table | store | columns | changes | numPartitions | seconds | rows/s | rows/s per partition | peak RSS MB (engine and simulator) |\n");
      std::printf("|---|---|---|---|---|---|---|---|---|\n");
      EndToEnd(NarrowShape(), rows, dir, 1);
      EndToEnd(NarrowShape(), rows, dir, 1, store_uri);
      mssql_cdc::storage::ReleaseObjectStores();
      return 0;
    }
    if (!served_only) {
    // First, so its memory figures hold nothing of the backlog runs.
    std::printf("Many streams in one process (processingTime 200 ms, quiet tables):\n\n");
    std::printf("| streams | start s | RSS MB started | MB per stream | RSS MB after catch-up | write s | catch-up s |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    ManyStreams(tables, dir);
    std::printf("\n");
    std::printf("End to end, sim to bronze (availableNow, one stream, with facts):\n\n");
    std::printf("| table | store | columns | changes | numPartitions | seconds | rows/s | rows/s per partition | peak RSS MB (engine and simulator) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int partitions : {1, 2}) EndToEnd(NarrowShape(), rows, dir, partitions);
    for (int partitions : {1, 2}) EndToEnd(WideShape(), wide_rows, dir, partitions);
    std::printf("\n");
    }
    std::printf("End to end through the odbc backend (the engine's TDS reader) from a sim serve child, "
                "numPartitions 1; CPU seconds of the engine's process and of the server apart:\n\n");
    std::printf("| table | changes | seconds | rows/s | engine CPU s | rows per engine CPU second | server CPU s | engine peak RSS MB |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    EndToEndServed(NarrowShape(), rows, dir, binary);
    EndToEndServed(WideShape(), wide_rows, dir, binary);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
