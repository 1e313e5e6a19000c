// Change-read throughput of the odbc backend against `mssql-cdc sim serve`: the whole change
// range of a bench table (bench_tables.h) read through Source::ReadChanges with 1, 2 and 4
// parallel connections. The range is cut as the engine cuts a batch for n partitions
// (BatchPlanner::Split over Source::SplitPoints) into n commit-aligned ranges, each read on
// its own thread through its own Source and reader. The sim backend reads the same file the
// same way, for the ceiling. Per run: rows (checked against the file's count of changes),
// wall seconds, rows/s, this process's CPU seconds (getrusage) and, with --server-pid, the
// server process's CPU seconds over the same span. Opening each connection is inside the
// timed span; computing the split is not.
//
//   build/bench/odbc_bench read --db bench/out/source_bench_narrow_1000000.sim --port PORT
//       --user bench --password Bench-pw-1 --connections 1,2,4 --server-pid PID
//
// `prepare` builds (once) the narrow and wide databases of --rows changes (the wide one
// --wide-rows, when given) in --dir, adds the login, and prints what bench/odbc_bench.py needs
// as JSON: the file, database, capture instance, the change read's SQL (statements.h
// ChangeRows) and the ranges for each count of connections, so that other readers send the
// same statement with the same bounds.
//
//   build/bench/odbc_bench prepare --rows 1000000 --dir bench/out --user bench --password Bench-pw-1
//
// `compare` reads the whole range through the odbc backend (with --driver, through that
// driver) and through the sim backend and compares every value (docs/odbc.md, Driver 18).
#include <sys/resource.h>
#include <unistd.h>

#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_process.h"
#include "bench_tables.h"
#include "core/errors.h"
#include "core/options.h"
#include "core/source_options.h"
#include "core/timezone.h"
#include "plan/planner.h"
#include "sim/database.h"
#include "core/arrow_status.h"
#include "source/odbc/statements.h"
#include "source/open_source.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc::bench {
namespace {

// This process's peak resident memory so far, in MB: a run is its own process (odbc_bench.py
// starts one per reader and count of connections), so it is the run's.
double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}


struct Range {
  Lsn from;
  Lsn to;
};

// The whole change range of the instance, cut as the engine cuts a batch for n partitions
// (BatchPlanner::Split over the source's split points): commit-aligned ranges.
std::vector<Range> SplitRange(Source& source, const std::string& instance, int n) {
  const Lsn from = source.MinLsn(instance);
  const std::optional<Lsn> to = source.MaxLsn();
  if (!to) throw SourceError("the database has no commits");
  std::vector<Range> ranges;
  for (const LsnRange& r : BatchPlanner::Split(source, instance, from, *to, n)) {
    ranges.push_back(Range{r.from, r.to});
  }
  return ranges;
}

// The change rows of the instance, counted by the source.
std::int64_t ChangeCount(Source& source, const std::string& instance) {
  const std::optional<Lsn> to = source.MaxLsn();
  if (!to) return 0;
  std::int64_t rows = 0;
  for (const SplitPoint& p : source.SplitPoints(instance, source.MinLsn(instance), *to, 1)) rows += p.rows;
  return rows;
}

struct Run {
  std::string backend;
  int connections = 0;
  std::int64_t rows = 0;
  double seconds = 0;
  double client_cpu = 0;
  double server_cpu = 0;
};

// One read of every range, each on its own thread with its own Source and reader.
Run ReadRanges(const SourceFactory& factory, const std::string& instance,
               const std::vector<std::string>& columns, const std::vector<Range>& ranges,
               int server_pid) {
  std::vector<std::int64_t> rows(ranges.size(), 0);
  std::vector<std::exception_ptr> failures(ranges.size());
  const double cpu_before = CpuSeconds();
  const double server_before = ProcessCpuSeconds(server_pid);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        auto source = factory();
        ChangeReadRequest request;
        request.capture_instance = instance;
        request.columns = columns;
        request.from = ranges[i].from;
        request.to = ranges[i].to;
        auto reader = source->ReadChanges(request, SourceClock::Utc());
        std::shared_ptr<arrow::RecordBatch> batch;
        while (true) {
          ThrowIfError(reader->ReadNext(&batch));
          if (!batch) break;
          rows[i] += batch->num_rows();
        }
      } catch (...) {
        failures[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  Run run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.client_cpu = CpuSeconds() - cpu_before;
  run.server_cpu = ProcessCpuSeconds(server_pid) - server_before;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (failures[i]) std::rethrow_exception(failures[i]);
    run.rows += rows[i];
  }
  run.connections = static_cast<int>(ranges.size());
  return run;
}

// The login `prepare --access-token-env` adds for the token.
constexpr const char* kTokenLogin = "bench_token";

// The access token held by the environment variable `name`; "" when no name is given.
std::string AccessToken(const std::string& name) {
  if (name.empty()) return "";
  const char* token = std::getenv(name.c_str());
  if (token == nullptr || *token == '\0') {
    throw ConfigError("--access-token-env names " + name + ", which is not set: export the token in it");
  }
  return token;
}

SourceFactory Factory(const std::string& backend, const std::string& db, int port,
                      const std::string& user, const std::string& password,
                      const std::string& driver, const std::string& change_reader,
                      const std::string& instance, const std::string& encrypt,
                      const std::string& access_token) {
  if (backend == "sim") {
    return MakeSourceFactory(SourceOptions::Parse(
        Options{{"backend", "sim"}, {"simPath", db}, {"captureInstance", instance}}));
  }
  if (backend != "odbc") throw ConfigError("--backends takes odbc and sim, not " + backend);
  const std::string database = sim::SimDatabase::Open(db)->database_name();
  // Encrypted, the name in the server's certificate (sim tls-cert's default), as a user connects.
  const std::string host = encrypt == "no" ? "127.0.0.1" : "localhost";
  std::string connection = "Server=" + host + "," + std::to_string(port) + ";Database=" +
                           database + ";Encrypt=" + encrypt;
  if (!driver.empty()) connection = "Driver={" + driver + "};" + connection;
  std::map<std::string, std::string> options{{"backend", "odbc"},
                                             {"connectionString", connection},
                                             {"changeReader", change_reader},
                                             {"captureInstance", instance}};
  if (access_token.empty()) {
    options["user"] = user;
    options["password"] = password;
  } else {
    options["accessToken"] = access_token;
  }
  return MakeSourceFactory(SourceOptions::Parse(Options(options)));
}

std::vector<int> ParseCounts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int n = std::stoi(item);
    if (n < 1) throw ConfigError("--connections takes counts >= 1, not " + item);
    counts.push_back(n);
  }
  return counts;
}

struct ReadArgs {
  std::string db;
  int port = 0;
  std::string user = "bench";
  std::string password = "Bench-pw-1";
  std::string driver;
  std::string change_reader = "auto";
  std::string instance;
  std::string encrypt = "no";
  std::string access_token_env;  // set: log in with the token it holds instead of a password
  std::string connections = "1,2,4";
  std::string backends = "odbc,sim";
  std::string columns;  // comma-separated; empty: all captured columns
  std::int64_t expect_rows = 0;
  int server_pid = 0;
  int repeats = 1;
  bool json = false;
};

int Read(const ReadArgs& args) {
  std::string instance = args.instance;
  std::int64_t file_rows = 0;
  {
    auto truth = OpenSimSource(args.db);
    if (instance.empty()) {
      const auto instances = truth->ListCaptureInstances();
      if (instances.size() != 1) throw ConfigError("the database has several capture instances: name one with --capture-instance");
      instance = instances[0].name;
    }
    file_rows = ChangeCount(*truth, instance);
  }
  if (args.expect_rows > 0 && file_rows != args.expect_rows) {
    throw InternalError("the file holds " + std::to_string(file_rows) + " changes, expected " +
                        std::to_string(args.expect_rows));
  }
  std::vector<std::string> columns;
  std::stringstream column_list(args.columns);
  for (std::string column; std::getline(column_list, column, ',');) columns.push_back(column);
  if (!args.json) {
    std::printf("| backend | connections | ranges | rows | wall s | rows/s | client CPU s | server CPU s |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
  }
  std::stringstream backends(args.backends);
  std::string backend;
  while (std::getline(backends, backend, ',')) {
    const SourceFactory factory = Factory(backend, args.db, args.port, args.user, args.password,
                                            args.driver, args.change_reader, instance, args.encrypt,
                                            AccessToken(args.access_token_env));
    for (const int n : ParseCounts(args.connections)) {
      std::vector<Range> ranges;
      {
        auto source = factory();
        ranges = SplitRange(*source, instance, n);
      }
      for (int r = 0; r < args.repeats; ++r) {
        Run run = ReadRanges(factory, instance, columns, ranges, args.server_pid);
        run.backend = backend;
        if (run.rows != file_rows) {
          throw InternalError("read " + std::to_string(run.rows) + " rows, expected " + std::to_string(file_rows));
        }
        if (args.json) {
          std::cout << nlohmann::json{{"backend", run.backend},
                                      {"connections", n},
                                      {"ranges", ranges.size()},
                                      {"rows", run.rows},
                                      {"seconds", run.seconds},
                                      {"client_cpu", run.client_cpu},
                                      {"server_cpu", run.server_cpu},
                                      {"peak_rss_mb", PeakRssMb()}}
                           .dump()
                    << std::endl;
        } else {
          std::printf("| %s | %d | %zu | %lld | %.3f | %.0f | %.2f | %.2f |\n", backend.c_str(), n,
                      ranges.size(), static_cast<long long>(run.rows), run.seconds, run.rows / run.seconds,
                      run.client_cpu, run.server_cpu);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}

// The whole range read through the odbc backend and through the sim backend, compared value
// for value: 0 when they are equal.
int Compare(const ReadArgs& args) {
  std::string instance = args.instance;
  if (instance.empty()) instance = OpenSimSource(args.db)->ListCaptureInstances().at(0).name;
  std::shared_ptr<arrow::Table> tables[2];
  const char* backends[2] = {"odbc", "sim"};
  for (int b = 0; b < 2; ++b) {
    auto source = Factory(backends[b], args.db, args.port, args.user, args.password, args.driver,
                          args.change_reader, instance, args.encrypt, AccessToken(args.access_token_env))();
    ChangeReadRequest request;
    request.capture_instance = instance;
    request.from = source->MinLsn(instance);
    request.to = *source->MaxLsn();
    auto reader = source->ReadChanges(request, SourceClock::Utc());
    auto table = reader->ToTable();
    ThrowIfError(table.status());
    tables[b] = *table;
  }
  const auto& odbc = *tables[0];
  const auto& sim = *tables[1];
  if (!odbc.schema()->Equals(*sim.schema())) {
    std::printf("schemas differ:\nodbc: %s\nsim: %s\n", odbc.schema()->ToString().c_str(),
                sim.schema()->ToString().c_str());
    return 1;
  }
  if (odbc.num_rows() != sim.num_rows()) {
    std::printf("odbc read %lld rows, sim %lld\n", static_cast<long long>(odbc.num_rows()),
                static_cast<long long>(sim.num_rows()));
    return 1;
  }
  int differing = 0;
  for (int c = 0; c < odbc.num_columns(); ++c) {
    if (!odbc.column(c)->Equals(*sim.column(c))) {
      std::printf("column %s differs\n", odbc.schema()->field(c)->name().c_str());
      ++differing;
    }
  }
  std::printf("%lld rows, %d columns: %d differ\n", static_cast<long long>(odbc.num_rows()),
              odbc.num_columns(), differing);
  return differing == 0 ? 0 : 1;
}

struct PrepareArgs {
  std::int64_t rows = 1'000'000;
  std::int64_t wide_rows = 0;  // 0: as many as --rows
  std::string dir = "bench/out";
  std::string user = "bench";
  std::string password = "Bench-pw-1";
  std::string access_token_env;  // set: also add a token login for the token it holds
  std::string connections = "1,2,4";
};

int Prepare(const PrepareArgs& args) {
  const std::string token = AccessToken(args.access_token_env);  // refused before anything is built
  std::filesystem::create_directories(args.dir);
  nlohmann::json out = nlohmann::json::array();
  for (const BenchShape& shape : {NarrowShape(), WideShape()}) {
    const std::int64_t rows = shape.name == "wide" && args.wide_rows > 0 ? args.wide_rows : args.rows;
    const std::string path = PrepareBenchDatabase(shape, rows, args.dir);
    std::string database;
    {
      auto db = sim::SimDatabase::Open(path);
      if (!db->Authenticate(args.user, args.password)) db->AddLogin(args.user, args.password, true);
      if (!token.empty() && !db->AuthenticateToken(token)) db->AddTokenLogin(kTokenLogin, token, true);
      database = db->database_name();
    }
    const std::string instance = shape.table.name.DefaultCaptureInstance();
    auto source = OpenSimSource(path);
    std::vector<std::string> columns;
    for (const CapturedColumn& c : source->CapturedColumns(instance)) columns.push_back(c.name);
    nlohmann::json ranges = nlohmann::json::object();
    for (const int n : ParseCounts(args.connections)) {
      nlohmann::json list = nlohmann::json::array();
      for (const Range& r : SplitRange(*source, instance, n)) {
        list.push_back({{"from", r.from.ToString()}, {"to", r.to.ToString()}});
      }
      ranges[std::to_string(n)] = list;
    }
    out.push_back({{"shape", shape.name},
                   {"columns", shape.table.columns.size()},
                   {"path", std::filesystem::absolute(path).string()},
                   {"database", database},
                   {"capture_instance", instance},
                   {"rows", ChangeCount(*source, instance)},
                   {"sql", odbc_sql::ChangeRows(instance, columns, true)},
                   {"ranges", ranges}});
  }
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace
}  // namespace mssql_cdc::bench

int main(int argc, char** argv) {
  using namespace mssql_cdc::bench;
  CLI::App app{"Change-read throughput of the odbc backend against sim serve"};
  app.require_subcommand(1);

  ReadArgs read;
  auto* read_cmd = app.add_subcommand("read", "Read a served database's whole change range");
  read_cmd->add_option("--db", read.db, "The database file `sim serve` serves")->required();
  read_cmd->add_option("--port", read.port, "The port it listens on (backend odbc)");
  read_cmd->add_option("--user", read.user, "Login")->capture_default_str();
  read_cmd->add_option("--password", read.password, "Its password")->capture_default_str();
  read_cmd->add_option("--driver", read.driver, "ODBC driver name or library path (default: the backend's choice)");
  read_cmd->add_option("--change-reader", read.change_reader, "auto, tds or driver (backend odbc)")
      ->capture_default_str();
  read_cmd->add_option("--encrypt", read.encrypt,
                       "Encrypt= of the connection string; yes and strict connect to localhost, the "
                       "name `sim tls-cert` certifies (trust its CA with SSL_CERT_FILE)")
      ->check(CLI::IsMember({"no", "yes", "strict"}))
      ->capture_default_str();
  read_cmd->add_option("--access-token-env", read.access_token_env,
                       "Log in with the access token this environment variable holds (a token "
                       "login that prepare --access-token-env added) instead of --user and --password");
  read_cmd->add_option("--capture-instance", read.instance, "Default: the database's only one");
  read_cmd->add_option("--connections", read.connections, "Counts of parallel connections")->capture_default_str();
  read_cmd->add_option("--backends", read.backends, "odbc, sim or both")->capture_default_str();
  read_cmd->add_option("--columns", read.columns, "Captured columns to read, comma-separated (default: all)");
  read_cmd->add_option("--expect-rows", read.expect_rows, "Fail unless the file holds this many changes");
  read_cmd->add_option("--server-pid", read.server_pid, "Measure this process's CPU too");
  read_cmd->add_option("--repeats", read.repeats, "Runs per backend and count")->check(CLI::PositiveNumber);
  read_cmd->add_flag("--json", read.json, "One JSON object per run instead of a table");

  PrepareArgs prepare;
  auto* prepare_cmd = app.add_subcommand("prepare", "Build the bench databases, add the login, print JSON");
  prepare_cmd->add_option("--rows", prepare.rows, "Changes per table")->check(CLI::PositiveNumber);
  prepare_cmd->add_option("--wide-rows", prepare.wide_rows, "Changes of the wide table (default: --rows)")
      ->check(CLI::PositiveNumber);
  prepare_cmd->add_option("--dir", prepare.dir, "Where the databases are kept")->capture_default_str();
  prepare_cmd->add_option("--user", prepare.user, "Login to add")->capture_default_str();
  prepare_cmd->add_option("--password", prepare.password, "Its password")->capture_default_str();
  prepare_cmd->add_option("--access-token-env", prepare.access_token_env,
                          "Also add a token login for the access token this environment variable holds");
  prepare_cmd->add_option("--connections", prepare.connections, "Counts of ranges to print")->capture_default_str();

  auto* compare_cmd = app.add_subcommand(
      "compare", "Read the whole range through odbc and sim and compare every value");
  compare_cmd->add_option("--db", read.db, "The database file `sim serve` serves")->required();
  compare_cmd->add_option("--port", read.port, "The port it listens on")->required();
  compare_cmd->add_option("--user", read.user, "Login")->capture_default_str();
  compare_cmd->add_option("--password", read.password, "Its password")->capture_default_str();
  compare_cmd->add_option("--driver", read.driver, "ODBC driver name or library path");
  compare_cmd->add_option("--capture-instance", read.instance, "Default: the database's first one");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*read_cmd) return Read(read);
    if (*compare_cmd) return Compare(read);
    return Prepare(prepare);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "odbc_bench: %s\n", e.what());
    return 2;
  }
}
