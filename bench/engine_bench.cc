// End-to-end engine throughput and the cost of many streams.
//
// (a) A backlog of N changes (narrow and wide tables) read by one stream with availableNow
//     from the simulator into a new bronze table (with a facts table), numPartitions 1 and 2:
//     change rows per second end to end.
// (b) 100 streams in one process over 100 quiet tables (processingTime 200 ms): time to start
//     them all, resident memory once started, and the time until every stream has written
//     100 new changes made to each table.
//
//   build/bench/engine_bench --rows 2000000 --dir bench/out
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_tables.h"
#include "core/errors.h"
#include "engine/stream.h"
#include "fleet/stream_group.h"
#include "sim/transaction.h"

namespace mssql_cdc::bench {
namespace {

namespace fs = std::filesystem;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// One availableNow run of the shape's backlog into a fresh bronze table.
void EndToEnd(const BenchShape& shape, std::int64_t rows, const std::string& dir, int partitions) {
  const std::string db = PrepareBenchDatabase(shape, rows, dir);
  const fs::path out = fs::path(dir) / ("engine_bench_" + shape.name + "_p" + std::to_string(partitions));
  fs::remove_all(out);
  StreamConfig config;
  config.source = SourceOptions::Parse(Options{{"backend", "sim"},
                                               {"simPath", db},
                                               {"captureInstance", shape.table.name.DefaultCaptureInstance()},
                                               {"numPartitions", std::to_string(partitions)}});
  config.params = StreamParams::Parse(Options{{"target", (out / "bronze").string()},
                                              {"app_id", "bench"},
                                              {"checkpoint", (out / "checkpoint").string()},
                                              {"facts_table", (out / "facts").string()},
                                              {"trigger", "availableNow"}});
  Stream stream(config, MakeSourceFactory(config.source));
  const auto start = std::chrono::steady_clock::now();
  const StreamProgress progress = stream.Run();
  const double seconds = Seconds(start);
  if (progress.total_rows != rows) {
    throw InternalError("the stream wrote " + std::to_string(progress.total_rows) + " rows, expected " +
                        std::to_string(rows));
  }
  std::printf("| %s | %zu | %lld | %d | %.2f | %.0f | %.0f |\n", shape.name.c_str(),
              shape.table.columns.size(), static_cast<long long>(rows), partitions, seconds,
              rows / seconds, rows / seconds / partitions);
  std::fflush(stdout);
  fs::remove_all(out);
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
  CLI::App app{"End-to-end engine throughput and many streams"};
  std::int64_t rows = 2'000'000;
  std::int64_t wide_rows = 2'000'000;
  int tables = 100;
  std::string dir = "bench/out";
  app.add_option("--rows", rows, "Backlog of the narrow table")->check(CLI::PositiveNumber);
  app.add_option("--wide-rows", wide_rows, "Backlog of the wide table")->check(CLI::PositiveNumber);
  app.add_option("--tables", tables, "Quiet tables for the many-streams run")->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where benchmark databases and tables are kept");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    // First, so its memory figures hold nothing of the backlog runs.
    std::printf("Many streams in one process (processingTime 200 ms, quiet tables):\n\n");
    std::printf("| streams | start s | RSS MB started | MB per stream | RSS MB after catch-up | write s | catch-up s |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    ManyStreams(tables, dir);
    std::printf("\n");
    std::printf("End to end, sim to bronze (availableNow, one stream, with facts):\n\n");
    std::printf("| table | columns | changes | numPartitions | seconds | rows/s | rows/s per partition |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (int partitions : {1, 2}) EndToEnd(NarrowShape(), rows, dir, partitions);
    for (int partitions : {1, 2}) EndToEnd(WideShape(), wide_rows, dir, partitions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
