// Memory bounded by configuration, not by the data: the peak resident memory of `mssql-cdc
// run` (a child process, as a user runs it, with the default [engine] settings) reading one
// big transaction and a big backlog without maxCommitsPerBatch, narrow and with long values,
// the same of Spark mode's executor read of one range (`_core.read_range` in a Python child,
// as a Spark task runs it) and of its planner over the whole backlog. Also the allocator's part: the resident memory a process
// keeps after a burst, per Arrow memory pool (ARROW_DEFAULT_MEMORY_POOL).
//
//   build/bench/memory_bench --txn-rows 5000000 --backlog-rows 20000000 --dir bench/out
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_tables.h"
#include "core/errors.h"
#include "sim/database.h"
#include "sim/transaction.h"

namespace mssql_cdc::bench {
namespace {

namespace fs = std::filesystem;

struct ChildRun {
  double seconds = 0;
  double peak_mb = 0;
  double user_s = 0, sys_s = 0;
  int status = 0;
};

// Runs `argv` with `env` added and returns its wall time, peak RSS (ru_maxrss) and CPU.
ChildRun RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                  const std::string& out_file = "/dev/null") {
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // the child must not print what the parent has not yet
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::FILE* out = std::freopen(out_file.c_str(), "w", stdout);
    (void)out;
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ChildRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_mb = usage.ru_maxrss / 1024.0;
  run.user_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6;
  run.sys_s = usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// PrepareBenchDatabase in a child process: building holds every row of a transaction, and a
// child forked later from a process that big would count its pages as its own peak RSS.
std::string PrepareInChild(const BenchShape& shape, std::int64_t rows, const std::string& dir,
                           std::int64_t per_transaction) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      PrepareBenchDatabase(shape, rows, dir, per_transaction, /*wire_rows=*/false);
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "memory_bench: %s\n", e.what());
      _exit(2);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw InternalError("building a database failed");
  // Built: only its path now. Read by the sim backend only, so without wire rows.
  return PrepareBenchDatabase(shape, rows, dir, per_transaction, /*wire_rows=*/false);
}

std::string Pipeline(const fs::path& dir, const std::string& db, const std::string& ci) {
  const fs::path file = dir / "pipeline.toml";
  std::ofstream(file) << "tables = [\"" << ci << "\"]\n\n[source]\nbackend = \"sim\"\nsimPath = \""
                      << db << "\"\n\n[stream]\ntarget = \"./bronze/{ci}\"\napp_id = \"{ci}\"\n"
                      << "checkpoint = \"./checkpoints/{ci}\"\nfacts_table = \"./facts\"\n"
                      << "trigger = \"availableNow\"\n";
  return file.string();
}

void NativeRun(const std::string& binary, const BenchShape& shape, const std::string& what,
               std::int64_t rows, std::int64_t per_transaction, const std::string& dir) {
  const std::string db = PrepareInChild(shape, rows, dir, per_transaction);
  const fs::path work = fs::path(dir) / ("memory_bench_" + shape.name);
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string pipeline = Pipeline(work, fs::absolute(db).string(), shape.table.name.DefaultCaptureInstance());
  const ChildRun run = RunChild({binary, "run", "--json", pipeline});
  if (run.status != 0) throw InternalError("mssql-cdc run failed on " + db);
  std::printf("| native run | %s | %s | %lld | %.1f | %.0f | %.0f | %.1f |\n", shape.name.c_str(),
              what.c_str(), static_cast<long long>(rows), run.seconds, rows / run.seconds, run.peak_mb,
              run.user_s + run.sys_s);
  std::fflush(stdout);
  fs::remove_all(work);
}

// Spark mode's executor read of the whole backlog as one range, in a Python child.
void SparkRangeRead(const std::string& python, const BenchShape& shape, const std::string& what,
                    std::int64_t rows, std::int64_t per_transaction, const std::string& dir) {
  const std::string db = fs::absolute(PrepareInChild(shape, rows, dir, per_transaction)).string();
  const std::string script =
      "import sys\n"
      "from mssql_cdc import _core\n"
      "options = {'backend': 'sim', 'simPath': sys.argv[1], 'captureInstance': sys.argv[2]}\n"
      "import json\n"
      "feed = _core.Feed(options)\n"
      "start = feed.initial_offset()\n"
      "end = feed.latest_offset(start)\n"
      "frm = _core.lsn_increment(json.loads(start)['lsn'])\n"
      "to = json.loads(end)['lsn']\n"
      "del feed\n"
      "n = 0\n"
      "for batch in _core.read_range(options, frm, to):\n"
      "    n += batch.num_rows\n"
      "assert n == int(sys.argv[3]), n\n";
  const ChildRun run =
      RunChild({python, "-c", script, db, shape.table.name.DefaultCaptureInstance(), std::to_string(rows)});
  if (run.status != 0) throw InternalError("the Python range read failed on " + db);
  std::printf("| Spark executor read of one range | %s | %s | %lld | %.1f | %.0f | %.0f | %.1f |\n",
              shape.name.c_str(), what.c_str(), static_cast<long long>(rows), run.seconds,
              rows / run.seconds, run.peak_mb, run.user_s + run.sys_s);
  std::fflush(stdout);
}

// Spark mode's planner (the driver-side source runner): where the batch over the whole backlog
// ends and its split into ranges, in a Python child.
void SparkPlanner(const std::string& python, const BenchShape& shape, const std::string& what,
                  std::int64_t rows, std::int64_t per_transaction, const std::string& dir) {
  const std::string db = fs::absolute(PrepareInChild(shape, rows, dir, per_transaction)).string();
  const std::string script =
      "import sys\n"
      "from mssql_cdc import _core\n"
      "options = {'backend': 'sim', 'simPath': sys.argv[1], 'captureInstance': sys.argv[2],\n"
      "           'numPartitions': '2'}\n"
      "feed = _core.Feed(options)\n"
      "start = feed.initial_offset()\n"
      "end = feed.latest_offset(start)\n"
      "assert feed.partitions(start, end)\n";
  const ChildRun run = RunChild({python, "-c", script, db, shape.table.name.DefaultCaptureInstance()});
  if (run.status != 0) throw InternalError("the Python planner failed on " + db);
  std::printf("| Spark planner (latestOffset, partitions) | %s | %s | %lld | %.1f | | %.0f | %.1f |\n",
              shape.name.c_str(), what.c_str(), static_cast<long long>(rows), run.seconds, run.peak_mb,
              run.user_s + run.sys_s);
  std::fflush(stdout);
}

std::int64_t StatusKb(pid_t pid, const char* key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::strlen(key)));
  }
  return -1;
}

// A long-running `mssql-cdc run` (processingTime 1 second) with `pool` as Arrow's memory pool:
// its resident memory idle, at the peak of a burst of `rows` changes in one transaction, and
// 2 and 10 seconds after it caught up.
void Burst(const std::string& binary, const std::string& pool, std::int64_t rows, const std::string& dir) {
  const BenchShape shape = NarrowShape();
  const fs::path work = fs::path(dir) / ("memory_bench_burst_" + pool);
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string db = fs::absolute(work / "burst.sim").string();
  {
    auto created = sim::SimDatabase::Create(db);
    created->CreateTable(shape.table);
    created->EnableCdc(shape.table.name);
  }
  std::string pipeline = Pipeline(work, db, shape.table.name.DefaultCaptureInstance());
  {
    std::ifstream in(pipeline);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("availableNow"), std::strlen("availableNow"), "processingTime=1 second");
    std::ofstream(pipeline) << text;
  }
  const std::string out = (work / "run.out").string();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("ARROW_DEFAULT_MEMORY_POOL", pool.c_str(), 1);
    if (!std::freopen(out.c_str(), "w", stdout)) _exit(127);
    execl(binary.c_str(), binary.c_str(), "run", "--json", pipeline.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::int64_t idle_kb = StatusKb(pid, "VmRSS:");
  // The burst, written by a child so that this process stays small.
  const pid_t writer = fork();
  if (writer == 0) {
    auto opened = sim::SimDatabase::Open(db);
    auto txn = opened->Begin();
    for (std::int64_t from = 1; from <= rows; from += 10'000) {
      std::vector<sim::Row> batch;
      for (std::int64_t i = from; i < std::min(rows + 1, from + 10'000); ++i) batch.push_back(shape.row(i));
      txn->InsertMany(shape.table.name, std::move(batch));
    }
    txn->Commit();
    _exit(0);
  }
  waitpid(writer, nullptr, 0);
  const auto written = std::chrono::steady_clock::now();
  const std::string done = "\"total_rows\":" + std::to_string(rows);
  for (;;) {
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find(done) != std::string::npos) break;
    if (std::chrono::steady_clock::now() - written > std::chrono::minutes(10)) {
      kill(pid, SIGKILL);
      throw InternalError("the burst was not read within 10 minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double catch_up = std::chrono::duration<double>(std::chrono::steady_clock::now() - written).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::int64_t after2_kb = StatusKb(pid, "VmRSS:");
  std::this_thread::sleep_for(std::chrono::seconds(8));
  const std::int64_t after10_kb = StatusKb(pid, "VmRSS:");
  const std::int64_t peak_kb = StatusKb(pid, "VmHWM:");
  kill(pid, SIGINT);
  waitpid(pid, nullptr, 0);
  std::printf("| %s | %lld | %.0f | %.0f | %.1f | %.0f | %.0f |\n", pool.c_str(), static_cast<long long>(rows),
              idle_kb / 1024.0, peak_kb / 1024.0, catch_up, after2_kb / 1024.0, after10_kb / 1024.0);
  std::fflush(stdout);
  fs::remove_all(work);
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  CLI::App app{"Peak memory of big transactions and backlogs"};
  std::int64_t txn_rows = 5'000'000;
  std::int64_t backlog_rows = 20'000'000;
  std::int64_t lob_every = 10'000;
  std::int64_t burst_rows = 2'000'000;
  std::string dir = "bench/out";
  std::string binary = "build/mssql-cdc";
  std::string python = ".venv/bin/python";
  app.add_option("--txn-rows", txn_rows, "Changes of the one big transaction")->check(CLI::PositiveNumber);
  app.add_option("--backlog-rows", backlog_rows, "Changes of the backlog (10,000 per commit)")
      ->check(CLI::PositiveNumber);
  app.add_option("--lob-every", lob_every, "Every n-th row of the long-value table holds two 1 MiB values")
      ->check(CLI::PositiveNumber);
  app.add_option("--burst-rows", burst_rows, "Changes of the burst a running stream reads")
      ->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where benchmark databases are kept");
  app.add_option("--binary", binary, "The mssql-cdc executable");
  app.add_option("--python", python, "The Python with mssql_cdc installed");
  bool burst_only = false;
  app.add_flag("--burst-only", burst_only, "Only the allocator runs after a burst");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  try {
    if (!burst_only) {
      std::printf("| run | table | changes as | changes | seconds | rows/s | peak RSS MB | CPU s |\n");
      std::printf("|---|---|---|---|---|---|---|---|\n");
      const BenchShape shapes[] = {NarrowShape(), LobShape(lob_every)};
      for (const auto& shape : shapes) {
        NativeRun(binary, shape, "one transaction", txn_rows, txn_rows, dir);
        NativeRun(binary, shape, "backlog", backlog_rows, 10'000, dir);
      }
      for (const auto& shape : shapes) {
        SparkRangeRead(python, shape, "one transaction", txn_rows, txn_rows, dir);
      }
      SparkPlanner(python, shapes[0], "backlog", backlog_rows, 10'000, dir);
    }
    std::printf("\nAfter a burst: `mssql-cdc run` (processingTime 1 second) idle, then one transaction "
                "of %lld narrow changes, per Arrow memory pool (ARROW_DEFAULT_MEMORY_POOL):\n\n",
                static_cast<long long>(burst_rows));
    std::printf("| Arrow pool | burst changes | RSS MB idle | peak RSS MB | catch-up s | RSS MB 2 s after | RSS MB 10 s after |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const char* pool : {"mimalloc", "jemalloc", "system"}) Burst(binary, pool, burst_rows, dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
