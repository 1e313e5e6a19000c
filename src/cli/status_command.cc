// `mssql-cdc status PIPELINE.toml`: per table of a pipeline, its last micro-batch facts row,
// its verdict and the health checks of status_checks.h, as text or JSON. Reads the facts and
// control tables; the source only with --source, for what only it can tell (whether CDC
// cleanup has purged each capture instance yet). The thresholds default to the monitoring
// guide's examples and each has an option. Exit status: 0 when every check passes, 1 when one
// alerts, 2 for bad input.
#include <arrow/table.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "cli/status_checks.h"
#include "core/errors.h"
#include "delta/table.h"
#include "engine/delta_backfill_tables.h"
#include "engine/table_schemas.h"
#include "fleet/stream_group.h"
#include "source/open_source.h"
#include "source/source_clock.h"

namespace mssql_cdc::cli {
namespace {

using nlohmann::json;

json Optional(const std::optional<UtcMicros>& t) {
  return t ? json(FormatIsoMillis(t->value)) : json(nullptr);
}
template <typename T>
json Optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json ToJson(const TableStatus& s) {
  json out = {{"capture_instance", s.capture_instance},
              {"target", s.target},
              {"facts_rows", s.facts_rows},
              {"healthy", s.alerts.empty()}};
  if (s.last) {
    const LastFacts& f = *s.last;
    out["last_facts"] = {{"app_id", f.app_id},
                         {"batch_id", Optional(f.batch_id)},
                         {"rows", Optional(f.rows)},
                         {"end_lsn", Optional(f.end_lsn)},
                         {"end_commit_ts", Optional(f.end_commit_ts)},
                         {"written_at", Optional(f.written_at)},
                         {"capture_lag_seconds", Optional(f.capture_lag_seconds)},
                         {"ingestion_lag_seconds", Optional(f.ingestion_lag_seconds)},
                         {"retention_headroom_hours", Optional(f.retention_headroom_hours)}};
  } else {
    out["last_facts"] = nullptr;
  }
  out["last_event"] = s.last_event ? json({{"event", *s.last_event}, {"written_at", Optional(s.last_event_at)}})
                                   : json(nullptr);
  if (s.verdict) {
    out["verdict"] = {{"finalized_until", FormatIsoMillis(s.verdict->finalized_until.value)},
                      {"end_lsn", s.verdict->end_lsn},
                      {"end_commit_ts", FormatIsoMillis(s.verdict->end_commit_ts.value)},
                      {"updated_at", FormatIsoMillis(s.verdict->updated_at.value)}};
  } else {
    out["verdict"] = nullptr;
  }
  if (s.cleanup) {
    out["cleanup"] = {{"capture_instance_enabled", FormatIsoMillis(s.cleanup->enabled_ts.value)},
                      {"retention_watermark", Optional(s.cleanup->watermark_ts)},
                      {"purged_yet", s.cleanup->purged_yet}};
  } else {
    out["cleanup"] = nullptr;
  }
  if (s.silver) {
    out["silver"] = {{"target", *s.silver},
                     {"finalized_until", s.silver_verdict ? json(FormatIsoMillis(s.silver_verdict->finalized_until.value))
                                                          : json(nullptr)},
                     {"held_by_open_snapshot", s.open_snapshot.has_value()}};
  } else {
    out["silver"] = nullptr;
  }
  if (s.open_snapshot) {
    const ChunkedProgress& p = *s.open_snapshot;
    const auto pace = p.pace();
    out["open_snapshot"] = {
        {"snapshot", p.opened.snapshot.ToString()},
        {"chunks_done", p.done().size()},
        {"chunks_total", p.planned ? json(p.chunks_total) : json(nullptr)},
        {"rows", p.rows()},
        {"rows_per_second", pace ? json(pace->rows_per_second) : json(nullptr)},
        {"seconds_left", pace && pace->seconds_left ? json(*pace->seconds_left) : json(nullptr)}};
  } else {
    out["open_snapshot"] = nullptr;
  }
  if (s.last_switch) {
    const SwitchProgress& p = *s.last_switch;
    out["capture_instance_switch"] = {{"from", p.from_instance}, {"to", p.to_instance},
                                      {"lsn", p.at_lsn}, {"batch_id", p.batch_id},
                                      {"older_may_be_disabled", p.passed()}};
  } else {
    out["capture_instance_switch"] = nullptr;
  }
  out["alerts"] = json::array();
  for (const auto& a : s.alerts) out["alerts"].push_back({{"check", a.check}, {"message", a.message}});
  return out;
}

// "chunked snapshot at LSN S: 12 of 40 chunks, 480000 rows, 35000 rows/s, about 3 min left".
std::string SnapshotLine(const ChunkedProgress& p) {
  std::string line = "chunked snapshot at LSN " + p.opened.snapshot.ToString() + ": ";
  if (!p.planned) return line + "open, not planned yet (its backfill has not started)";
  line += std::to_string(p.done().size()) + " of " + std::to_string(p.chunks_total) + " chunks, " +
          std::to_string(p.rows()) + " rows";
  if (auto pace = p.pace()) {
    line += ", " + Fixed(pace->rows_per_second, 0) + " rows/s";
    if (pace->seconds_left) {
      const double minutes = *pace->seconds_left / 60;
      line += minutes < 1 ? ", under a minute left" : ", about " + Fixed(minutes, 0) + " min left";
    }
  }
  return line;
}

// "switched dbo_items -> dbo_items_v2 at LSN S in batch 7; dbo_items may be disabled".
std::string SwitchLine(const SwitchProgress& p) {
  return "switched " + p.from_instance + " -> " + p.to_instance + " at LSN " + p.at_lsn +
         " in batch " + std::to_string(p.batch_id) + "; " +
         (p.passed() ? p.from_instance + " may be disabled (`mssql-cdc switches` checks every stream)"
                     : "wait for one more batch before disabling " + p.from_instance);
}

void PrintText(const std::vector<TableStatus>& tables) {
  std::size_t width = 5;
  for (const auto& s : tables) width = std::max(width, s.capture_instance.size());
  auto pad = [](std::string text, std::size_t n) {
    if (text.size() < n) text.append(n - text.size(), ' ');
    return text;
  };
  std::cout << pad("table", width + 2) << pad("batch", 8) << pad("last facts (UTC)", 25)
            << pad("end commit (UTC)", 25) << pad("verdict (UTC)", 25) << "health\n";
  for (const auto& s : tables) {
    std::string batch = "-", written = "-", end = "-", verdict = "-";
    if (s.last) {
      if (s.last->batch_id) batch = std::to_string(*s.last->batch_id);
      if (s.last->written_at) written = FormatIsoMillis(s.last->written_at->value);
      if (s.last->end_commit_ts) end = FormatIsoMillis(s.last->end_commit_ts->value);
    }
    if (s.verdict) verdict = FormatIsoMillis(s.verdict->finalized_until.value);
    std::cout << pad(s.capture_instance, width + 2) << pad(batch, 8) << pad(written, 25)
              << pad(end, 25) << pad(verdict, 25) << (s.alerts.empty() ? "ok" : "ALERT") << "\n";
    if (s.silver) {
      std::cout << "  silver " << *s.silver << ": verdict "
                << (s.silver_verdict ? FormatIsoMillis(s.silver_verdict->finalized_until.value) : std::string("-"))
                << (s.open_snapshot ? " (held while the chunked snapshot is open)" : "") << "\n";
    }
    if (s.open_snapshot) std::cout << "  " << SnapshotLine(*s.open_snapshot) << "\n";
    if (s.last_switch) std::cout << "  " << SwitchLine(*s.last_switch) << "\n";
    for (const auto& a : s.alerts) {
      std::cout << "  " << a.check << ": " << a.message << "\n";
    }
  }
}

struct StatusArgs {
  std::string file;
  bool json = false;
  bool source = false;  // also ask the source what only it can tell
  Thresholds thresholds;
  double watch_seconds = 0;  // > 0: print again at this interval until interrupted
};

int Status(const StatusArgs& args);

// Status again and again, the screen cleared first on a terminal, so that an open snapshot's
// progress (and every check) can be watched live.
int Watch(const StatusArgs& args) {
  const bool terminal = isatty(STDOUT_FILENO) != 0;
  for (;;) {
    if (terminal) std::cout << "\033[H\033[2J";
    const int status = Status(args);
    if (status == kExitBadInput) return status;
    std::cout << std::flush;
    std::this_thread::sleep_for(std::chrono::duration<double>(args.watch_seconds));
  }
}

int Status(const StatusArgs& args) {
  // stdout carries the output proper; the engine's log goes to stderr.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "mssql-cdc", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  PipelineConfig config;
  try {
    config = LoadPipelineConfig(args.file, args.source ? Secrets::kRequired : Secrets::kOptional);
  } catch (const Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return 2;
  }
  const UtcMicros now = NowUtc();
  std::vector<TableStatus> tables;
  // Each table is read once, however many streams the pipeline has.
  std::optional<delta::DeltaTable> facts;
  if (config.facts_table && delta::DeltaTable::Exists(*config.facts_table)) {
    facts = delta::DeltaTable::Open(*config.facts_table);
  }
  std::map<std::string, Verdict> verdicts;
  if (config.many.control_table) verdicts = ReadVerdicts(*config.many.control_table);
  for (const auto& table : config.many.tables) {
    TableStatus s;
    s.capture_instance = table.capture_instance;
    s.target = ExpandTemplate(config.many.target, "target", table.capture_instance);
    if (facts) {
      const auto rows = facts->Read({{"target", "=", s.target}});  // read once for both
      ReadFacts(*rows, s);
      const std::string app_id = ExpandTemplate(config.many.app_id, "app_id", table.capture_instance);
      if (auto switches = SwitchesOf(*rows, app_id); !switches.empty()) s.last_switch = switches.back();
      auto chunked = NewestChunked(SnapshotEventsOf(*rows), app_id);
      if (chunked && !chunked->opened.complete) s.open_snapshot = std::move(chunked);
    }
    if (auto verdict = verdicts.find(s.target); verdict != verdicts.end()) s.verdict = verdict->second;
    if (config.many.silver && config.many.control_table) {
      s.silver = TableSilverOptions(config.many, TableStreamConfig(config.many, table)).silver;
      if (auto verdict = verdicts.find(*s.silver); verdict != verdicts.end()) s.silver_verdict = verdict->second;
    }
    if (args.source) {
      const StreamConfig stream = TableStreamConfig(config.many, table);
      std::unique_ptr<Source> source = MakeSourceFactory(stream.source)();
      const SourceClock clock = ResolveSourceClock(*source, stream.source.source_time_zone);
      s.cleanup = ReadCleanupState(*source, clock, table.capture_instance);
    }
    if (delta::DeltaTable::Exists(s.target)) {
      if (const auto missing = delta::DeltaTable::Open(s.target).MissingFiles(); !missing.empty()) {
        s.alerts.push_back({"missing_files", MissingFilesMessage("bronze table", s.target, missing)});
      }
    }
    Check(config, args.thresholds, now, s);
    tables.push_back(std::move(s));
  }
  bool healthy = true;
  for (const auto& s : tables) healthy = healthy && s.alerts.empty();
  if (args.json) {
    json out = {{"file", config.file}, {"now", FormatIsoMillis(now.value)}, {"healthy", healthy},
                {"tables", json::array()}};
    for (const auto& s : tables) out["tables"].push_back(ToJson(s));
    std::cout << out.dump(2) << "\n";
  } else {
    PrintText(tables);
  }
  return healthy ? 0 : 1;
}

}  // namespace

void AddStatusCommand(CLI::App& app) {
  auto args = std::make_shared<StatusArgs>();
  auto* cmd = app.add_subcommand(
      "status", "Per table of a pipeline file: the last facts row, health checks and verdict");
  cmd->add_option("pipeline", args->file, "The pipeline file")->required();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("--watch", args->watch_seconds,
                  "Print again every SECONDS until interrupted (a terminal is cleared first): "
                  "open snapshots' progress, live")
      ->check(CLI::PositiveNumber);
  Thresholds& t = args->thresholds;
  cmd->add_option("--stale-minutes", t.stale_minutes, "alert when a table has no facts for this long")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--min-headroom-hours", t.min_headroom_hours,
                  "alert when the retention headroom left is under this")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--max-ingestion-lag-seconds", t.max_ingestion_lag_seconds,
                  "alert when the newest batch ends further behind the source's max LSN")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-capture-lag-seconds", t.max_capture_lag_seconds,
                  "alert when SQL Server's capture is further behind")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--source", args->source,
                "also connect to the source to tell a capture instance CDC cleanup has not purged yet "
                "(its headroom is then its age) from one cleanup is about to reach");
  cmd->add_option("--retention-hours", t.retention_hours,
                  "with --source: the cleanup retention to assume for an instance not purged yet "
                  "(SQL Server's default: 72)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--verdict-margin-minutes", t.verdict_margin_minutes,
                  "a verdict may be this much older than one period plus the trigger interval")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->callback([args] {
    const int status = args->watch_seconds > 0 ? Watch(*args) : Status(*args);
    if (status != kExitOk) ExitWith(status);
  });
}

}  // namespace mssql_cdc::cli
