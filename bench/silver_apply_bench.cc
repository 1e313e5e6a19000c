// One native apply_changes call (silver/apply_changes.h), timed in a process of its own, for
// bench/silver_bench.py: bronze, silver and control tables at paths, keys given. Prints one
// JSON line: seconds, peak resident memory (MB), bronze rows read, keys upserted and deleted,
// whether silver was rebuilt, and a rebuild's runs spilled and their bytes.
//
//   build/bench/silver_apply_bench --bronze B --silver S --control C --key id --instance dbo_bench
//       [--memory-budget "256 MiB"] [--spill-directory DIR]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_process.h"
#include "core/run_allocator.h"
#include "engine/engine_limits.h"
#include "silver/apply_changes.h"

int main(int argc, char** argv) {
  using namespace mssql_cdc;
  UseRunAllocator();
  CLI::App app{"one native apply_changes call, timed"};
  ApplyChangesOptions options;
  std::string instance;
  app.add_option("--bronze", options.bronze)->required();
  app.add_option("--silver", options.silver)->required();
  app.add_option("--control", options.control)->required();
  app.add_option("--key", options.keys)->required();
  app.add_option("--instance", instance)->required();
  std::string budget = "256 MiB";
  app.add_option("--memory-budget", budget, "[engine] memory_budget");
  app.add_option("--spill-directory", options.budget.spill_directory, "[engine] spill_directory");
  CLI11_PARSE(app, argc, argv);
  options.budget.memory_bytes = ParseByteSize(budget, "--memory-budget");
  options.capture_instances = {instance};
  const auto started = std::chrono::steady_clock::now();
  const ApplyResult result = ApplyChanges(options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "{\"seconds\": %.3f, \"peak_rss_mb\": %.1f, \"bronze_rows\": %lld, \"upserted\": %lld, "
      "\"deleted\": %lld, \"rebuilt\": %s, \"runs_spilled\": %d, \"spilled_bytes\": %lld}\n",
      seconds, bench::PeakRssMb(), static_cast<long long>(result.bronze_rows),
      static_cast<long long>(result.upserted), static_cast<long long>(result.deleted),
      result.rebuilt ? "true" : "false", result.runs_spilled, static_cast<long long>(result.spilled_bytes));
  return 0;
}
