// Snapshots of a big table, natively: the bootstrap of one stream reading a table of N rows
// (loaded before CDC was enabled, as a table that existed long before: no change rows) into a
// new bronze table: full with numPartitions 1 and 2, and chunked (the backfill inside the
// run, chunks of 1,000,000 rows, 2 at a time) from the open to the last wave's facts rows. Narrow: bench_tables.h's narrow shape
// (10 columns); wide: the same with two (max) columns of 300 and 200 characters. Reports the
// load's time (the simulator's bulk load, on first build), then per run rows per second, wall
// time and peak resident memory.
//
//   build/bench/snapshot_bench --rows 10000000 --dir bench/out
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "bench_process.h"
#include "bench_tables.h"
#include "core/errors.h"
#include "core/run_allocator.h"
#include "delta/table.h"
#include "engine/stream.h"
#include "fleet/idle_trim.h"
#include "sim/database.h"

namespace mssql_cdc::bench {
namespace {

namespace fs = std::filesystem;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string Letters(std::int64_t i, std::size_t length) {
  std::string text(length, 'a');
  for (std::size_t k = 0; k < length; ++k) text[k] = static_cast<char>('a' + (i + k * 7) % 26);
  return text;
}

BenchShape SnapshotWideShape() {
  BenchShape narrow = NarrowShape();
  BenchShape s{"wide", narrow.table, {}};
  s.table.name = sim::TableName{"bench", "snapshot_wide"};
  s.table.columns.push_back(sim::ParseColumnDeclaration("doc nvarchar(max)"));
  s.table.columns.push_back(sim::ParseColumnDeclaration("note varchar(max)"));
  s.row = [narrow_row = narrow.row](std::int64_t i) {
    sim::Row r = narrow_row(i);
    r["doc"] = Letters(i, 300);
    r["note"] = Letters(i + 1, 200);
    return r;
  };
  return s;
}

// The database of the shape's table with `rows` rows, loaded and then CDC-enabled; built on
// first use (printing the load's time) and kept.
std::string PrepareSnapshotDatabase(const BenchShape& shape, std::int64_t rows, const std::string& dir) {
  const fs::path path = fs::path(dir) / ("snapshot_" + shape.name + "_" + std::to_string(rows) + ".sim");
  if (fs::exists(path)) return path.string();
  const fs::path building = path.string() + ".building";
  fs::remove(building);
  const auto start = std::chrono::steady_clock::now();
  {
    auto db = sim::SimDatabase::Create(building.string());
    db->CreateTable(shape.table);
    constexpr std::int64_t kChunk = 1'000'000;
    for (std::int64_t first = 1; first <= rows; first += kChunk) {
      db->LoadRows(shape.table.name, first, std::min(kChunk, rows - first + 1), shape.row);
    }
    db->EnableCdc(shape.table.name);
  }
  std::printf("Loaded %lld %s rows in %.1f s (sim bulk load, goal under 60 s for 10,000,000).\n\n",
              static_cast<long long>(rows), shape.name.c_str(), Seconds(start));
  fs::rename(building, path);
  return path.string();
}

// Returns the wall time.
double Snapshot(const BenchShape& shape, const std::string& db, std::int64_t rows,
                const std::string& dir, int partitions, bool chunked) {
  const fs::path out = fs::path(dir) / ("snapshot_bench_" + shape.name + "_p" + std::to_string(partitions) +
                                        (chunked ? "_chunked" : ""));
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
                                              {"trigger", "availableNow"},
                                              {"bootstrap", "true"},
                                              {"snapshot", chunked ? "chunked" : "full"}});
  config.backfill.partitions = partitions;
  Stream stream(config, MakeSourceFactory(config.source));
  ReleaseFreeMemory();
  ResetPeakRss();
  const auto start = std::chrono::steady_clock::now();
  stream.Run();
  const double seconds = Seconds(start);
  std::int64_t written = 0;
  const auto bronze = delta::DeltaTable::Open((out / "bronze").string());
  for (const auto& [path, add] : bronze.state().files) {
    const auto stats = nlohmann::json::parse(add.stats.value_or("{}"));
    written += stats.value("numRecords", std::int64_t{0});
  }
  if (written != rows) {
    throw InternalError("the snapshot wrote " + std::to_string(written) + " rows, expected " +
                        std::to_string(rows));
  }
  std::printf("| %s | %zu | %lld | %s | %d | %.2f | %.0f | %.0f |\n", shape.name.c_str(),
              shape.table.columns.size(), static_cast<long long>(rows), chunked ? "chunked" : "full",
              partitions, seconds, rows / seconds, PeakRssMb());
  std::fflush(stdout);
  fs::remove_all(out);
  return seconds;
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  mssql_cdc::UseRunAllocator();  // the memory settings `mssql-cdc run` uses
  CLI::App app{"Full and chunked snapshots of a big table, natively"};
  std::int64_t rows = 10'000'000;
  std::string dir = "bench/out";
  app.add_option("--rows", rows, "Rows of each table")->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where benchmark databases are kept");
  bool load_only = false;
  app.add_flag("--load-only", load_only,
               "Build the databases (snapshot_<narrow|wide>_<rows>.sim) and stop, for "
               "bench/snapshot_spark_bench.py");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    for (const BenchShape& shape : {NarrowShape(), SnapshotWideShape()}) {
      const std::string db = PrepareSnapshotDatabase(shape, rows, dir);
      if (load_only) continue;
      std::printf("| table | columns | rows | snapshot | numPartitions | seconds | rows/s | peak RSS MB |\n");
      std::printf("|---|---|---|---|---|---|---|---|\n");
      Snapshot(shape, db, rows, dir, 1, false);
      const double full = Snapshot(shape, db, rows, dir, 2, false);
      const double chunked = Snapshot(shape, db, rows, dir, 2, true);
      std::printf("\n%s: chunked takes %.2fx the full snapshot's wall time (goal: at most 1.2x).\n\n",
                  shape.name.c_str(), chunked / full);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "snapshot_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
