// A thousand streams in one process, as a user runs them: `mssql-cdc run` (a child) over N
// quiet tables with processingTime 1 second, reading through the odbc backend from a `mssql-cdc
// sim serve` child, so that the connections to the server can be counted. Reports the time
// until every stream started, failures, the threads and server connections of the run at
// their most, and its memory once every stream caught up with a few changes written to each
// table, and the time until every stream started again on a restart. Then fairness: one
// table's backlog, long enough to be steady past the start, read alone and next to the N
// quiet streams, in turns (medians of --rounds of each, on a shared machine).
//
//   build/bench/fleet_bench --tables 1000 --backlog-rows 1600000 --dir bench/out
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arrow/api.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_process.h"
#include "bench_tables.h"
#include "core/errors.h"
#include "delta/table.h"
#include "sim/database.h"
#include "sim/transaction.h"

namespace mssql_cdc::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr char kPassword[] = "Fleet-bench-1";

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::int64_t StatusValue(pid_t pid, const char* key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::strlen(key)));
  }
  return -1;
}

// Established TCP connections whose local port is `port`: the server's side of each session.
int ConnectionsTo(int port) {
  int count = 0;
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);
  while (std::getline(tcp, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state;
    in >> slot >> local >> remote >> state;
    const auto colon = local.find(':');
    if (colon == std::string::npos) continue;
    if (std::stoi(local.substr(colon + 1), nullptr, 16) == port && state == "01") ++count;
  }
  return count;
}

// Runs `work` in a child, so that this process stays small for the children it measures.
void InChild(const std::function<void()>& work) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      work();
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fleet_bench: %s\n", e.what());
      _exit(2);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw InternalError("a setup step failed");
}

std::string QuietName(int t) { return "quiet" + std::to_string(t); }

// The busy table's backlog comes in commits of 1,000 rows, read 100 commits a batch, back to
// back (trigger default), so the stream reads as fast as the engine lets it.
constexpr int kBusyCommitRows = 1000;
constexpr int kBusyCommits = 100;

// The database: `tables` quiet tables and the busy narrow table, with `backlog` changes of it.
void BuildDatabase(const std::string& path, int tables, std::int64_t backlog) {
  InChild([&] {
    fs::remove(path);
    auto db = sim::SimDatabase::Create(path);
    db->AddLogin("fleet", kPassword, true);
    for (int t = 0; t < tables; ++t) {
      sim::TableDef table;
      table.name = sim::TableName{"dbo", QuietName(t)};
      table.columns = {sim::ParseColumnDeclaration("id int not null"),
                       sim::ParseColumnDeclaration("note nvarchar(40)")};
      table.primary_key = {"id"};
      db->CreateTable(table);
      db->EnableCdc(table.name);
    }
    const BenchShape busy = NarrowShape();
    db->CreateTable(busy.table);
    db->EnableCdc(busy.table.name);
    for (std::int64_t first = 1; first <= backlog; first += kBusyCommitRows) {
      std::vector<sim::Row> rows;
      for (std::int64_t i = first; i < std::min(backlog + 1, first + kBusyCommitRows); ++i) {
        rows.push_back(busy.row(i));
      }
      auto txn = db->Begin();
      txn->InsertMany(busy.table.name, std::move(rows));
      txn->Commit();
    }
  });
}

std::string Pipeline(const std::string& dir, const ServedChild& server, const std::string& database,
                     const std::vector<std::string>& tables,
                     const std::map<std::string, std::string>& extra = {}) {
  const std::string path = dir + "/pipeline.toml";
  std::ofstream out(path);
  // One section per table (in start order), so that one of them can have options of its own.
  out << "[source]\nbackend = \"odbc\"\nconnectionString = \"Server=127.0.0.1," << server.port
      << ";Database=" << database << ";Encrypt=no\"\nuser = \"fleet\"\npassword_env = \"FLEET_BENCH_PW\"\n"
      << "sourceTimeZone = \"UTC\"\n"
      << "\n[stream]\ntarget = \"./lake/bronze/{ci}\"\napp_id = \"{ci}\"\ncheckpoint = \"./checkpoints/{ci}\"\n"
      << "facts_table = \"./lake/facts\"\ncontrol_table = \"./lake/control\"\n"
      << "trigger = \"processingTime=1 second\"\n";
  for (const auto& table : tables) {
    out << "\n[tables." << table << "]\n";
    if (auto options = extra.find(table); options != extra.end()) out << options->second;
  }
  return path;
}

// Per table, the total rows the run's JSON lines reported last.
std::map<std::string, std::int64_t> TotalRows(const std::string& out) {
  std::map<std::string, std::int64_t> totals;
  std::istringstream in(ReadAll(out));
  for (std::string line; std::getline(in, line);) {
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || doc.value("event", "") != "batch") continue;
    totals[doc.value("table", "")] = doc.value("total_rows", std::int64_t{0});
  }
  return totals;
}

struct RunOutcome {
  double started_s = 0;
  double caught_up_s = 0;  // from `since` given to the wait
  std::int64_t rss_mb = 0, peak_mb = 0;
  int threads = 0, connections = 0;
  int failed = 0;
};

// Starts `mssql-cdc run`, waits until every stream started, then runs `during` and waits until
// every table in `expected` reached its row total.
RunOutcome Run(const std::string& binary, const std::string& pipeline, const std::string& dir,
               const ServedChild& server, const std::map<std::string, std::int64_t>& expected,
               const std::function<void()>& during) {
  setenv("FLEET_BENCH_PW", kPassword, 1);
  const std::string out = dir + "/run.out";
  fs::remove(out);  // an earlier run's "started" must not be taken for this one's
  const auto start = Clock::now();
  const pid_t run = Spawn({binary, "run", "--json", pipeline}, out);
  RunOutcome outcome;
  auto sample = [&] {
    outcome.threads = std::max<int>(outcome.threads, static_cast<int>(StatusValue(run, "Threads:")));
    outcome.connections = std::max(outcome.connections, ConnectionsTo(server.port));
  };
  if (!WaitForText(out, "\"event\":\"started\"", std::chrono::seconds(600), sample)) {
    kill(run, SIGKILL);
    throw InternalError("the run did not start its streams in 10 minutes");
  }
  outcome.started_s = Since(start);
  const auto since = Clock::now();
  if (during) during();
  for (;;) {
    sample();
    const auto totals = TotalRows(out);
    bool done = true;
    for (const auto& [table, rows] : expected) {
      auto it = totals.find(table);
      if (it == totals.end() || it->second < rows) {
        done = false;
        break;
      }
    }
    if (done) break;
    if (Since(since) > 900) {
      kill(run, SIGKILL);
      throw InternalError("the streams did not catch up in 15 minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  outcome.caught_up_s = Since(since);
  sample();
  outcome.rss_mb = StatusValue(run, "VmRSS:") / 1024;
  outcome.peak_mb = StatusValue(run, "VmHWM:") / 1024;
  kill(run, SIGINT);
  int status = 0;
  waitpid(run, &status, 0);
  const std::string text = ReadAll(out);
  const auto summary = nlohmann::json::parse(text.substr(text.rfind("{\"event\":\"summary\"")), nullptr, false);
  if (!summary.is_discarded()) outcome.failed = static_cast<int>(summary["failed"].size());
  return outcome;
}

void ThousandStreams(const std::string& binary, int tables, const std::string& dir) {
  const std::string work = (fs::absolute(dir) / "fleet_bench_many").string();
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string db = work + "/fleet.sim";
  BuildDatabase(db, tables, 0);
  std::string database;
  InChild([&] { std::ofstream(work + "/name") << sim::SimDatabase::Open(db)->database_name(); });
  database = ReadAll(work + "/name");
  const ServedChild server = ServeSim(binary, db, work);
  std::vector<std::string> names;
  std::map<std::string, std::int64_t> expected;
  constexpr int kChanges = 3;  // transactions of one row per table
  for (int t = 0; t < tables; ++t) {
    names.push_back("dbo_" + QuietName(t));
    expected["dbo_" + QuietName(t)] = kChanges;
  }
  const std::string pipeline = Pipeline(work, server, database, names);
  const RunOutcome outcome = Run(binary, pipeline, work, server, expected, [&] {
    InChild([&] {
      auto opened = sim::SimDatabase::Open(db);
      for (int c = 1; c <= kChanges; ++c) {
        for (int t = 0; t < tables; ++t) {
          auto txn = opened->Begin();
          txn->Insert(sim::TableName{"dbo", QuietName(t)}, {{"id", c}, {"note", "change " + std::to_string(c)}});
          txn->Commit();
        }
      }
    });
  });
  // A restart, as every deploy does: the streams find their checkpoints and the shared facts
  // and control tables with a log of a thousand commits.
  const RunOutcome restarted = Run(binary, pipeline, work, server, {}, nullptr);
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::printf("| %d | %.1f | %d | %.1f | %lld | %lld | %d | %d |\n", tables, outcome.started_s, outcome.failed,
              outcome.caught_up_s, static_cast<long long>(outcome.rss_mb),
              static_cast<long long>(outcome.peak_mb), outcome.threads, outcome.connections);
  std::printf("| %d, restarted | %.1f | %d | - | %lld | %lld | %d | %d |\n", tables, restarted.started_s,
              restarted.failed, static_cast<long long>(restarted.rss_mb),
              static_cast<long long>(restarted.peak_mb), restarted.threads, restarted.connections);
  std::fflush(stdout);
  fs::remove_all(work);
}

// The fairness runs' database, built once: the quiet tables and the busy table's backlog, served
// by one sim serve for every run.
struct FairnessDatabase {
  std::string name;
  ServedChild server;
};

FairnessDatabase BuildFairnessDatabase(const std::string& binary, int quiet, std::int64_t backlog,
                                       const std::string& work) {
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string path = work + "/fleet.sim";
  BuildDatabase(path, std::max(quiet, 1), backlog);
  InChild([&] { std::ofstream(work + "/name") << sim::SimDatabase::Open(path)->database_name(); });
  FairnessDatabase db;
  db.name = ReadAll(work + "/name");
  db.server = ServeSim(binary, path, work);
  return db;
}

// The busy table's backlog read in batches of kBusyCommits commits, alone or next to `quiet`
// quiet tables' streams, into a lake and checkpoints of its own: its rows per second from its
// first batch's start to its last batch's facts row.
double BusyThroughput(const std::string& binary, const FairnessDatabase& db, int quiet,
                      std::int64_t backlog, const std::string& work, RunOutcome* out_outcome) {
  fs::remove_all(work);
  fs::create_directories(work);
  // The busy table starts last: its batches run next to the quiet streams, not before them.
  std::vector<std::string> names;
  for (int t = 0; t < quiet; ++t) names.push_back("dbo_" + QuietName(t));
  names.push_back("bench_narrow");
  // Back to back, not once a second: its rows per second are then what the engine gives it.
  const std::string pipeline =
      Pipeline(work, db.server, db.name, names,
               {{"bench_narrow", "trigger = \"default\"\nmaxCommitsPerBatch = " +
                                     std::to_string(kBusyCommits) + "\n"}});
  *out_outcome = Run(binary, pipeline, work, db.server, {{"bench_narrow", backlog}}, nullptr);
  auto facts = delta::DeltaTable::Open(work + "/lake/facts").Read({{"app_id", "=", "bench_narrow"}});
  std::int64_t first = INT64_MAX, last = 0;
  const auto started = facts->GetColumnByName("started_at");
  const auto written = facts->GetColumnByName("written_at");
  for (int c = 0; c < started->num_chunks(); ++c) {
    const auto& s = static_cast<const arrow::TimestampArray&>(*started->chunk(c));
    const auto& w = static_cast<const arrow::TimestampArray&>(*written->chunk(c));
    for (std::int64_t i = 0; i < s.length(); ++i) {
      if (!s.IsNull(i)) first = std::min(first, s.Value(i));
      if (!w.IsNull(i)) last = std::max(last, w.Value(i));
    }
  }
  if (!std::getenv("FLEET_BENCH_KEEP")) fs::remove_all(work);
  return backlog / (static_cast<double>(last - first) / 1e6);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Fairness on a shared, noisy machine: alone and crowded runs take turns, `rounds` of each,
// over one database; the figures are medians, the ratio that of each round's pair.
void Fairness(const std::string& binary, int quiet, std::int64_t backlog, const std::string& dir, int rounds) {
  const std::string base = (fs::absolute(dir) / "fleet_bench_fair").string();
  const FairnessDatabase db = BuildFairnessDatabase(binary, quiet, backlog, base);
  std::vector<double> alone, crowd, ratio;
  RunOutcome most_alone, most_crowd;
  auto keep_most = [](RunOutcome& most, const RunOutcome& run) {
    most.peak_mb = std::max(most.peak_mb, run.peak_mb);
    most.threads = std::max(most.threads, run.threads);
    most.connections = std::max(most.connections, run.connections);
  };
  for (int round = 1; round <= rounds; ++round) {
    RunOutcome run;
    const std::string suffix = "_" + std::to_string(round);
    alone.push_back(BusyThroughput(binary, db, 0, backlog, base + "/alone" + suffix, &run));
    keep_most(most_alone, run);
    crowd.push_back(BusyThroughput(binary, db, quiet, backlog, base + "/crowded" + suffix, &run));
    keep_most(most_crowd, run);
    ratio.push_back(crowd.back() / alone.back());
    std::fprintf(stderr, "fleet_bench: fairness round %d: alone %.0f, next to %d quiet streams %.0f rows/s\n",
                 round, alone.back(), quiet, crowd.back());
  }
  kill(db.server.pid, SIGTERM);
  waitpid(db.server.pid, nullptr, 0);
  if (!std::getenv("FLEET_BENCH_KEEP")) fs::remove_all(base);
  std::printf("| 1 | %.0f | 1.00 | %lld | %d | %d |\n", Median(alone), static_cast<long long>(most_alone.peak_mb),
              most_alone.threads, most_alone.connections);
  std::printf("| %d | %.0f | %.2f | %lld | %d | %d |\n", quiet + 1, Median(crowd), Median(ratio),
              static_cast<long long>(most_crowd.peak_mb), most_crowd.threads, most_crowd.connections);
  std::printf("\nRatio in each round (crowded ÷ alone): ");
  for (std::size_t r = 0; r < ratio.size(); ++r) std::printf("%s%.2f", r ? ", " : "", ratio[r]);
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  CLI::App app{"A thousand streams in one process"};
  int tables = 1000;
  std::int64_t backlog = 1'600'000;
  std::string dir = "bench/out";
  std::string binary = "build/mssql-cdc";
  app.add_option("--tables", tables, "Quiet tables")->check(CLI::PositiveNumber);
  app.add_option("--backlog-rows", backlog, "The busy table's backlog for the fairness run")->check(CLI::PositiveNumber);
  app.add_option("--dir", dir, "Where to work");
  app.add_option("--binary", binary, "The mssql-cdc executable");
  bool fairness_only = false;
  app.add_flag("--fairness-only", fairness_only, "Only the fairness runs (for profiling)");
  int rounds = 3;
  app.add_option("--rounds", rounds, "Alone and crowded fairness runs, each")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  binary = std::filesystem::absolute(binary).string();
  std::filesystem::create_directories(dir);
  try {
    if (!fairness_only) {
      std::printf("| streams | all started s | failed | caught up s (3 changes per table) | RSS MB after | peak RSS MB | threads at most | server connections at most |\n");
      std::printf("|---|---|---|---|---|---|---|---|\n");
      ThousandStreams(binary, tables, dir);
    }
    std::printf("\nFairness: one table's backlog of %lld narrow changes (maxCommitsPerBatch 100, trigger default) read alone, "
                "and next to %d quiet streams (processingTime 1 second, odbc from sim serve); its rows/s "
                "from its first batch's start to its last batch's facts row; medians of %d rounds, alone and "
                "crowded in turn:\n\n",
                static_cast<long long>(backlog), tables - 1, rounds);
    std::printf("| streams | busy rows/s | ratio to alone | peak RSS MB | threads at most | server connections at most |\n");
    std::printf("|---|---|---|---|---|---|\n");
    Fairness(binary, tables - 1, backlog, dir, rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleet_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
