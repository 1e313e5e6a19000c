// (a) The latency of a Delta commit's one atomic request, per store: create-if-absent of a file
//     of a commit's size (WriteIfAbsent), N times in a row, on the local disk and in an object
//     store, with the 50th and 99th percentiles.
// (b) Opening a table with many versions (a checkpoint 6 versions before the newest, as a
//     writer that checkpoints every 10 leaves it) beside what one listing of its _delta_log
//     alone costs.
// bench/storage_bench.py runs it against an S3 emulator.
//
//   build/bench/storage_bench --dir bench/out --store-uri s3://bench/latency [--commits 300]
//       [--versions 100000 --store-versions 10000]
#include <arrow/api.h>

#include <algorithm>
#include <ctime>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_process.h"
#include "delta/checkpoint.h"
#include "delta/log_files.h"
#include "delta/log_replay.h"
#include "delta/table.h"
#include "storage/store.h"

namespace mssql_cdc::bench {
namespace {

// A bronze commit's size: commitInfo, txn and a few add actions with statistics.
const std::string kCommit(2400, 'x');

void CommitLatency(const std::string& uri, const std::string& label, int commits) {
  auto [fs, root] = storage::OpenStore(uri);
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%lld",
                static_cast<long long>(std::chrono::system_clock::now().time_since_epoch().count()));
  const std::string log = root + "/" + prefix + "/_delta_log";
  fs->CreateDirectories(log);
  std::vector<double> millis;
  const auto start = std::chrono::steady_clock::now();
  for (int v = 0; v < commits; ++v) {
    char name[32];
    std::snprintf(name, sizeof name, "/%020d.json", v);
    const auto before = std::chrono::steady_clock::now();
    if (!fs->WriteIfAbsent(log + name, kCommit)) throw std::runtime_error("version taken: " + log + name);
    millis.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(millis.begin(), millis.end());
  auto percentile = [&](double p) {
    return millis[std::min(millis.size() - 1, static_cast<std::size_t>(p * millis.size()))];
  };
  std::printf("| %s | %d | %.2f | %.2f | %.2f | %.0f |\n", label.c_str(), commits, percentile(0.50),
              percentile(0.99), millis.back(), PeakRssMb());
  std::fflush(stdout);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A table of `versions` versions under `uri`: a created table, then one small commit (a txn)
// per version, and a checkpoint 5 versions before the newest.
void ReplayTime(const std::string& uri, const std::string& label, std::int64_t versions) {
  auto [fs, root] = storage::OpenStore(uri);
  delta::CreateOptions options;
  options.schema = arrow::schema({arrow::field("id", arrow::int64())});
  delta::DeltaTable::Create(uri, options);
  const auto build = std::chrono::steady_clock::now();
  for (std::int64_t v = 1; v < versions; ++v) {
    const std::string commit = delta::EncodeCommit({delta::Txn{"bench", v, std::nullopt}});
    fs->WriteIfAbsent(delta::CommitPath(root, v), commit);
  }
  const std::int64_t checkpoint = versions - 6;
  delta::WriteCheckpoint(*fs, root, delta::ReplayLog(*fs, root, checkpoint));
  const double built = SecondsSince(build);
  const auto open = std::chrono::steady_clock::now();
  const delta::DeltaTable table = delta::DeltaTable::Open(uri);
  const double opened = SecondsSince(open);
  if (table.state().version != versions - 1) throw std::runtime_error("replay stopped early");
  const auto list = std::chrono::steady_clock::now();
  const std::size_t names = fs->List(delta::LogDirectory(root)).size();
  const double listed = SecondsSince(list);
  std::printf("| %s | %lld | %.1f | %.3f | %zu | %.3f | %.0f |\n", label.c_str(),
              static_cast<long long>(versions), built, opened, names, listed, PeakRssMb());
  std::fflush(stdout);
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  CLI::App app{"Commit latency per store"};
  std::string dir = "bench/out";
  std::string store_uri;
  int commits = 300;
  std::int64_t versions = 0;
  std::int64_t store_versions = 0;
  app.add_option("--dir", dir, "The local directory for the local disk's commits");
  app.add_option("--store-uri", store_uri, "An object store's URI (s3://bucket/prefix)")->required();
  app.add_option("--commits", commits, "Commits per store")->check(CLI::PositiveNumber);
  app.add_option("--versions", versions, "Versions of the table opened on the local disk (0: none)");
  app.add_option("--store-versions", store_versions, "Versions of the table opened in the store");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::string local = (std::filesystem::absolute(dir) / "storage_bench").string();
    std::filesystem::remove_all(local);
    std::printf("| store | commits | p50 ms | p99 ms | max ms | peak RSS MB |\n|---|---|---|---|---|---|\n");
    CommitLatency(local, "local disk", commits);
    CommitLatency(store_uri, store_uri, commits);
    if (versions > 10 || store_versions > 10) {
      std::printf("\n| store | versions | build s | open s | names in _delta_log | one listing s | peak RSS MB |\n"
                  "|---|---|---|---|---|---|---|\n");
      if (versions > 10) ReplayTime(local + "/replay", "local disk", versions);
      if (store_versions > 10) {
        ReplayTime(store_uri + "/replay-" + std::to_string(std::time(nullptr)), store_uri, store_versions);
      }
    }
    std::filesystem::remove_all(local);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "storage_bench: %s\n", e.what());
    mssql_cdc::storage::ReleaseObjectStores();
    return 2;
  }
  mssql_cdc::storage::ReleaseObjectStores();
  return 0;
}
