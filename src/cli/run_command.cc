// `mssql-cdc run PIPELINE.toml`: every table of a pipeline file as one StreamGroup.
//
// On a terminal it keeps one live line per table; otherwise (or with --json) it writes JSON
// lines: one per committed batch per table, one per failure and a final summary. SIGINT and
// SIGTERM stop every stream after its current batch; a second signal ends the process at
// once. Exit status (cli/exit_status.h): 0 when no table failed, 1 when one did (stderr
// names each with its error class), 2 when the input was refused before anything was
// written, 3 when no table failed but another run owned a table's checkpoint (that table was
// refused, the others ran).
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/metrics_endpoint.h"
#include "cli/pipeline_config.h"
#include "cli/run_metrics.h"
#include "core/errors.h"
#include "engine/finalization.h"
#include "fleet/idle_trim.h"
#include "fleet/stream_group.h"

namespace mssql_cdc::cli {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How long the streams stay still after a change before free memory goes back to the system
// (fleet/idle_trim.h): long enough that back-to-back batches do not pay for it.
constexpr auto kTrimAfterStillness = std::chrono::seconds(1);

volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int signal_number) {
  g_stop_signal = signal_number;
  // A second signal ends the process the default way: a way out when a batch hangs.
  std::signal(signal_number, SIG_DFL);
}

// Installs the handlers for the life of a run and restores the previous ones after.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  bool received() const { return g_stop_signal != 0; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

struct ErrorText {
  std::string error_class;
  std::string message;
  bool refused = false;  // another run holds the table's checkpoint
};

ErrorText Describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {std::string(e.class_name()), e.what(), e.code() == ErrorCode::kCheckpointInUse};
  } catch (const std::exception& e) {
    return {"InternalError", e.what()};
  } catch (...) {
    return {"InternalError", "unknown error"};
  }
}

json Nullable(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string TimeText(const std::optional<UtcMicros>& t) {
  return t ? FormatIsoMillis(t->value) : "-";
}

// "42 s", "12 min", "5 h", "3 d": a lag readable at a glance.
std::string Duration(double seconds) {
  const auto whole = static_cast<long long>(seconds);
  if (whole < 120) return std::to_string(whole) + " s";
  if (whole < 120 * 60) return std::to_string(whole / 60) + " min";
  if (whole < 48 * 3600) return std::to_string(whole / 3600) + " h";
  return std::to_string(whole / 86400) + " d";
}

// What the run reports about one table at a moment.
struct TableState {
  std::string status;  // running, finished, stopped, failed, refused
  StreamProgress progress;
  std::optional<ErrorText> error;
};

class RunReporter {
 public:
  RunReporter(const PipelineConfig& config, const StreamGroup& group, bool live)
      : config_(config), group_(group), live_(live) {}

  void Started() {
    if (live_) {
      std::cout << "mssql-cdc run " << config_.file << ": " << group_.order().size()
                << " tables, trigger " << config_.trigger.ToString() << " (Ctrl-C stops)\n";
      return;
    }
    Emit({{"event", "started"}, {"file", config_.file}, {"tables", group_.order()},
          {"trigger", config_.trigger.ToString()}});
  }

  // Called often; reports what changed since the last call. The streams are looked at only
  // when the group counted a change (or a stop was asked for since).
  void Poll(bool stop_requested) {
    const std::uint64_t changes = group_.changes();
    if (scanned_ && changes == scanned_changes_ && stop_requested == scanned_stop_) {
      if (live_ && Clock::now() - last_draw_ > std::chrono::milliseconds(250)) Draw();
      return;
    }
    scanned_ = true;
    scanned_changes_ = changes;
    scanned_stop_ = stop_requested;
    for (const auto& ci : group_.order()) {
      TableState state = State(ci, stop_requested);
      TableState& last = last_[ci];
      if (!live_) {
        if (state.progress.batches > last.progress.batches) EmitBatch(ci, state);
        if (state.error && !last.error) {
          Emit({{"event", state.status}, {"table", ci}, {"error_class", state.error->error_class},
                {"error", state.error->message}});
        }
      }
      last = std::move(state);
    }
    if (live_ && Clock::now() - last_draw_ > std::chrono::milliseconds(250)) Draw();
  }

  void Finish(int exit_status) {
    if (live_) {
      Draw();
      return;
    }
    json tables = json::object();
    json failed = json::array();
    json refused = json::array();
    std::map<std::string, Verdict> verdicts;
    if (config_.many.control_table) {
      try {
        verdicts = ReadVerdicts(*config_.many.control_table);
      } catch (const Error&) {
        // The summary still goes out; a control table that cannot be read shows no verdicts.
      }
    }
    for (const auto& ci : group_.order()) {
      const TableState& s = last_[ci];
      json t = {{"status", s.status},
                {"batches", s.progress.batches},
                {"rows", s.progress.total_rows},
                {"end_lsn", s.progress.end ? json(s.progress.end->lsn.ToString()) : json(nullptr)},
                {"end_commit_ts", s.progress.end && s.progress.end->commit_ts
                                      ? json(FormatIsoMillis(s.progress.end->commit_ts->value))
                                      : json(nullptr)}};
      if (config_.many.control_table) {
        const auto target = ExpandTemplate(config_.many.target, "target", ci);
        const auto verdict = verdicts.find(target);
        t["finalized_until"] = verdict != verdicts.end()
                                   ? json(FormatIsoMillis(verdict->second.finalized_until.value))
                                   : json(nullptr);
      }
      if (s.error) {
        t["error_class"] = s.error->error_class;
        t["error"] = s.error->message;
        (s.error->refused ? refused : failed).push_back(ci);
      }
      tables[ci] = std::move(t);
    }
    Emit({{"event", "summary"}, {"tables", tables}, {"failed", failed}, {"refused", refused},
          {"exit_status", exit_status}});
  }

  const TableState& state(const std::string& ci) { return last_[ci]; }

 private:
  TableState State(const std::string& ci, bool stop_requested) const {
    const Stream& stream = *group_.streams().at(ci);
    TableState state;
    state.progress = stream.progress();
    if (stream.active()) {
      state.status = "running";
    } else if (auto error = stream.error()) {
      state.error = Describe(error);
      state.status = state.error->refused ? "refused" : "failed";
    } else {
      state.status = stop_requested ? "stopped" : "finished";
    }
    return state;
  }

  void EmitBatch(const std::string& ci, const TableState& s) {
    const StreamProgress& p = s.progress;
    const auto verdict = CandidateVerdict(config_, p);
    Emit({{"event", "batch"},
          {"table", ci},
          {"batch_id", p.last_batch_id},
          {"rows", p.last_rows},
          {"batches", p.batches},
          {"total_rows", p.total_rows},
          {"end_lsn", p.end ? json(p.end->lsn.ToString()) : json(nullptr)},
          {"end_commit_ts",
           p.end && p.end->commit_ts ? json(FormatIsoMillis(p.end->commit_ts->value)) : json(nullptr)},
          {"capture_lag_seconds", Nullable(p.capture_lag_seconds)},
          {"ingestion_lag_seconds", Nullable(p.ingestion_lag_seconds)},
          {"verdict", verdict ? json(FormatIsoMillis(verdict->value)) : json(nullptr)}});
  }

  static void Emit(const json& line) { std::cout << line.dump() << std::endl; }

  // One line per table, rewritten in place (cursor up, clear line).
  void Draw() {
    if (drawn_lines_ > 0) std::cout << "\x1b[" << drawn_lines_ << "A";
    std::size_t width = 5;
    for (const auto& ci : group_.order()) width = std::max(width, ci.size());
    for (const auto& ci : group_.order()) {
      const TableState& s = last_[ci];
      std::ostringstream line;
      line << ci << std::string(width - ci.size() + 2, ' ') << s.status << "  batches "
           << s.progress.batches << "  rows " << s.progress.total_rows << "  lag ";
      line << (s.progress.capture_lag_seconds ? Duration(*s.progress.capture_lag_seconds) : "-");
      line << "  verdict " << TimeText(CandidateVerdict(config_, s.progress));
      if (s.error) line << "  " << s.error->error_class;
      std::cout << "\r\x1b[2K" << line.str() << "\n";
    }
    std::cout << std::flush;
    drawn_lines_ = group_.order().size();
    last_draw_ = Clock::now();
  }

  const PipelineConfig& config_;
  const StreamGroup& group_;
  const bool live_;
  std::map<std::string, TableState> last_;
  bool scanned_ = false;
  std::uint64_t scanned_changes_ = 0;
  bool scanned_stop_ = false;
  std::size_t drawn_lines_ = 0;
  Clock::time_point last_draw_{};
};

struct RunArgs {
  std::string file;
  bool json = false;
  std::optional<double> timeout_seconds;
  std::optional<int> metrics_port;
};

int RunPipeline(const RunArgs& args) {
  // stdout carries the output proper; the engine's log goes to stderr.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "mssql-cdc", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  // stdout carries the JSON lines or the live table; the engine's log goes to stderr.
  PipelineConfig config;
  try {
    config = LoadPipelineConfig(args.file);
  } catch (const Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  for (const auto& warning : config.warnings) std::cerr << "mssql-cdc: warning: " << warning << "\n";
  const bool live = !args.json && isatty(STDOUT_FILENO);

  StopSignals signals;
  std::unique_ptr<StreamGroup> group;
  try {
    group = StreamGroup::Prepare(config.many);
  } catch (const Error& e) {
    // The message names the table (Prepare sees to it); nothing was written.
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  // The metrics port is taken before anything is written: a port in use refuses the run.
  std::unique_ptr<MetricsEndpoint> metrics;
  if (args.metrics_port) {
    try {
      metrics = std::make_unique<MetricsEndpoint>(
          *args.metrics_port, [&config, &group] { return RunMetricsText(config, *group, NowUtc()); });
    } catch (const Error& e) {
      std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
      return kExitBadInput;
    }
    spdlog::info("metrics on http://127.0.0.1:{}/metrics", metrics->port());
  }
  // The pipeline's own compaction and vacuum ([maintenance]); its retention is checked now.
  std::unique_ptr<MaintenanceRunner> maintenance;
  if (config.maintenance) {
    try {
      maintenance = std::make_unique<MaintenanceRunner>(config.many, *config.maintenance);
    } catch (const Error& e) {
      std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  try {
    group->Start();
  } catch (const Error& e) {
    std::cerr << "mssql-cdc: a table failed to start, and the tables started before it were "
                 "stopped: "
              << e.class_name() << ": " << e.what() << "\n";
    return kExitFailed;
  }

  RunReporter reporter(config, *group, live);
  reporter.Started();
  const auto deadline = args.timeout_seconds
                            ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(*args.timeout_seconds))
                            : Clock::time_point::max();
  // StopAll waits for the current batches; it runs on its own thread so that progress keeps
  // being reported meanwhile.
  std::atomic<bool> stop_requested{false};
  std::thread stopper;
  auto all_ended = [&] {
    for (const auto& [ci, stream] : group->streams()) {
      if (stream->active()) return false;
    }
    return true;
  };
  // The streams are looked at again only when the group counted a change in them.
  std::optional<std::uint64_t> seen_changes;
  bool ended = false;
  IdleTrim idle_trim(kTrimAfterStillness);
  while (true) {
    const std::uint64_t changes = group->changes();
    if (changes != seen_changes) {
      seen_changes = changes;
      ended = all_ended();
    }
    idle_trim.Poll(changes);
    reporter.Poll(stop_requested);
    if (ended) break;
    if (!stop_requested && (signals.received() || Clock::now() >= deadline)) {
      stop_requested = true;
      stopper = std::thread([&group] { group->StopAll(); });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (stopper.joinable()) stopper.join();

  const auto ended_with_error = group->AwaitAll(std::chrono::milliseconds(0));
  bool any_failed = false;
  for (const auto& [ci, error] : ended_with_error) any_failed |= !Describe(error).refused;
  const int status = any_failed                  ? kExitFailed
                     : !group->refused().empty() ? kExitInUse
                                                 : kExitOk;
  reporter.Finish(status);
  for (const auto& ci : group->order()) {
    auto it = ended_with_error.find(ci);
    if (it == ended_with_error.end()) continue;
    const ErrorText text = Describe(it->second);
    std::cerr << "mssql-cdc: table " << ci << (text.refused ? " refused: " : " failed: ")
              << text.error_class << ": " << text.message << "\n";
  }
  return status;
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run every table of a pipeline file (TOML) into Delta");
  cmd->add_option("pipeline", args->file, "The pipeline file")->required();
  cmd->add_flag("--json", args->json, "Write JSON lines even on a terminal");
  cmd->add_option("--timeout", args->timeout_seconds,
                  "Stop every stream after this many seconds")
      ->check(PositiveNumber("seconds"));
  cmd->add_option("--metrics-port", args->metrics_port,
                  "Serve each table's health on http://127.0.0.1:PORT/metrics (Prometheus text format)")
      ->check(CLI::Range(1, 65535));
  cmd->callback([args] {
    const int status = RunPipeline(*args);
    // CLI11 turns a RuntimeError into the process's exit status without printing anything.
    if (status != kExitOk) ExitWith(status);
  });
}

}  // namespace mssql_cdc::cli
