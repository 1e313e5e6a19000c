// `mssql-cdc status PIPELINE.toml`: per table of a pipeline, its last micro-batch facts row,
// the health checks of the monitoring guide (reference-features 4.9) and its verdict.
// Reads the facts and control tables; the source only with --source, for what only it can
// tell (whether CDC cleanup has purged each capture instance yet).
//
// The thresholds default to the guide's examples and each has an option: no facts for 15
// minutes, retention headroom minus the time since the last facts row under 24 hours, headroom
// unknown, ingestion lag over an hour, capture lag over 10 minutes, and a verdict (bronze's,
// and silver's with [silver] unless its chunked snapshot is open) older than one period plus
// the trigger interval plus 15 minutes. Exit status: 0 when every check passes, 1 when one
// alerts, 2 for bad input.
#include <arrow/scalar.h>
#include <arrow/table.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "core/errors.h"
#include "delta/table.h"
#include "delta/table_cells.h"
#include "engine/delta_backfill_tables.h"
#include "engine/finalization.h"
#include "engine/retention_guard.h"
#include "fleet/stream_group.h"
#include "schema_change/switch_progress.h"
#include "snapshot/chunked_state.h"
#include "source/open_source.h"
#include "source/source_clock.h"

namespace mssql_cdc::cli {
namespace {

using nlohmann::json;

// What alerts; the options of `status` set them.
struct Thresholds {
  double stale_minutes = 15;
  double min_headroom_hours = 24;
  double max_ingestion_lag_seconds = 3600;
  double max_capture_lag_seconds = 600;
  double verdict_margin_minutes = 15;
  // The cleanup retention assumed for an instance cleanup has not purged yet (--source):
  // SQL Server's default, 4320 minutes.
  double retention_hours = 72;
};

// The latest micro-batch facts row of one target.
struct LastFacts {
  std::string app_id;
  std::optional<std::int64_t> batch_id, rows;
  std::optional<std::string> end_lsn;
  std::optional<UtcMicros> end_commit_ts, written_at;
  std::optional<double> capture_lag_seconds, ingestion_lag_seconds, retention_headroom_hours;
};

struct Alert {
  std::string check;
  std::string message;
};

struct TableStatus {
  std::string capture_instance;
  std::string target;
  std::int64_t facts_rows = 0;  // micro-batch rows of the target
  std::optional<LastFacts> last;
  // The latest event row (bootstrap, data_skipped, ...), which micro-batch facts do not show.
  std::optional<std::string> last_event;
  std::optional<UtcMicros> last_event_at;
  std::optional<Verdict> verdict;
  std::optional<CleanupState> cleanup;  // with --source
  std::optional<std::string> silver;  // the table's silver table, with [silver]
  std::optional<Verdict> silver_verdict;
  // The stream's newest chunked snapshot while it is open: how far its backfill has come.
  std::optional<ChunkedProgress> open_snapshot;
  // The stream's newest capture-instance switch, and whether it has gone past it.
  std::optional<SwitchProgress> last_switch;
  std::vector<Alert> alerts;
};

std::optional<std::string> StringCell(const arrow::Table& t, const std::string& c, std::int64_t r) {
  return delta::TextCell(t, c, r);
}
std::optional<UtcMicros> TimeCell(const arrow::Table& t, const std::string& c, std::int64_t r) {
  auto micros = delta::TimestampCell(t, c, r);
  if (!micros) return std::nullopt;
  return UtcMicros{*micros};
}
using delta::DoubleCell;
using delta::IntCell;

// The micro-batch rows (event NULL) of the target; the latest by written_at.
void ReadFacts(const arrow::Table& target_rows, TableStatus& status) {
  std::optional<std::int64_t> latest;
  std::optional<UtcMicros> latest_written;
  for (std::int64_t row = 0; row < target_rows.num_rows(); ++row) {
    const auto written = TimeCell(target_rows, "written_at", row);
    if (auto event = StringCell(target_rows, "event", row)) {
      if (!status.last_event || (written && (!status.last_event_at || *written >= *status.last_event_at))) {
        status.last_event = std::move(event);
        status.last_event_at = written;
      }
      continue;
    }
    ++status.facts_rows;
    if (!latest || (written && (!latest_written || *written >= *latest_written))) {
      latest = row;
      latest_written = written;
    }
  }
  if (!latest) return;
  const std::int64_t r = *latest;
  LastFacts last;
  last.app_id = StringCell(target_rows, "app_id", r).value_or("");
  last.batch_id = IntCell(target_rows, "batch_id", r);
  last.rows = IntCell(target_rows, "rows", r);
  last.end_lsn = StringCell(target_rows, "end_lsn", r);
  last.end_commit_ts = TimeCell(target_rows, "end_commit_ts", r);
  last.written_at = latest_written;
  last.capture_lag_seconds = DoubleCell(target_rows, "capture_lag_seconds", r);
  last.ingestion_lag_seconds = DoubleCell(target_rows, "ingestion_lag_seconds", r);
  last.retention_headroom_hours = DoubleCell(target_rows, "retention_headroom_hours", r);
  status.last = std::move(last);
}

std::int64_t PeriodMicros(Granularity granularity) {
  switch (granularity) {
    case Granularity::kMinute: return kMicrosPerMinute;
    case Granularity::kHour: return kMicrosPerHour;
    case Granularity::kDay: return kMicrosPerDay;
  }
  return kMicrosPerHour;
}

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

void Check(const PipelineConfig& config, const Thresholds& limits, UtcMicros now, TableStatus& s) {
  const double stale_hours = limits.stale_minutes / 60;
  auto alert = [&s](std::string check, std::string message) {
    s.alerts.push_back({std::move(check), std::move(message)});
  };
  if (!config.facts_table) {
    alert("no_facts_table", "the pipeline has no facts_table: nothing to check");
  } else if (!s.last && s.last_event_at && (*s.last_event == "bootstrap" || *s.last_event == "resnapshot")) {
    // A snapshot with no change after it yet: fresh while the snapshot is; nothing measured
    // the source's retention or lags yet, so there is nothing else to check.
    const double hours = static_cast<double>(now.value - s.last_event_at->value) / kMicrosPerHour;
    if (hours > stale_hours) {
      alert("stale", "no facts for " + Fixed(hours * 60, 0) + " minutes since the " + *s.last_event);
    }
  } else if (!s.last) {
    alert("no_facts", "no micro-batch facts for this target yet" +
                          (s.last_event ? " (last event: " + *s.last_event + ")" : std::string()));
  } else {
    const LastFacts& f = *s.last;
    const double hours_since_last =
        f.written_at ? static_cast<double>(now.value - f.written_at->value) / kMicrosPerHour : 0;
    if (hours_since_last > stale_hours) {
      alert("stale", "no facts for " + Fixed(hours_since_last * 60, 0) + " minutes");
    }
    if (s.cleanup && !s.cleanup->purged_yet) {
      // Nothing purged yet: the measured headroom is only the instance's age. Changes are at
      // risk once they are older than the retention, on the source's clock.
      const double behind_hours = f.ingestion_lag_seconds.value_or(0) / 3600 + hours_since_last;
      if (limits.retention_hours - behind_hours < limits.min_headroom_hours) {
        alert("headroom", "cleanup has not purged " + s.capture_instance + " yet, but the stream is " +
                              Fixed(behind_hours, 1) + " h behind: " +
                              Fixed(limits.retention_hours - behind_hours, 1) + " h left of a " +
                              Fixed(limits.retention_hours, 0) + " h retention (--retention-hours)");
      }
    } else if (!f.retention_headroom_hours) {
      alert("headroom_unknown", "retention headroom unknown (the stream is blind to cleanup)");
    } else if (*f.retention_headroom_hours - hours_since_last < limits.min_headroom_hours) {
      alert("headroom", "retention headroom " + Fixed(*f.retention_headroom_hours - hours_since_last, 1) +
                            " h left: CDC cleanup may purge changes not yet read" +
                            (s.cleanup ? std::string()
                                       : " (or cleanup has not purged anything yet and this is the capture "
                                         "instance's age: `status --source` tells them apart)"));
    }
    if (f.ingestion_lag_seconds && *f.ingestion_lag_seconds > limits.max_ingestion_lag_seconds) {
      alert("ingestion_lag", "ingestion lag " + Fixed(*f.ingestion_lag_seconds, 0) + " s");
    }
    if (f.capture_lag_seconds && *f.capture_lag_seconds > limits.max_capture_lag_seconds) {
      alert("capture_lag", "capture lag " + Fixed(*f.capture_lag_seconds, 0) + " s");
    }
  }
  if (config.many.control_table) {
    const std::int64_t interval_micros =
        config.trigger.kind() == Trigger::Kind::kProcessingTime
            ? std::chrono::duration_cast<std::chrono::microseconds>(config.trigger.interval()).count()
            : 0;
    const auto margin_micros = static_cast<std::int64_t>(limits.verdict_margin_minutes * kMicrosPerMinute);
    const UtcMicros oldest_fresh{now.value - PeriodMicros(config.many.granularity) -
                                 interval_micros - margin_micros};
    if (!s.verdict) {
      alert("no_verdict", "no verdict yet in " + *config.many.control_table);
    } else if (s.verdict->finalized_until < oldest_fresh) {
      alert("verdict_stale", "finalized_until " + FormatIsoMillis(s.verdict->finalized_until.value) +
                                 " is older than expected");
    }
    // Silver's verdict is held while a chunked snapshot is open: not a fault then.
    if (s.silver && config.facts_table && !s.open_snapshot) {
      if (!s.silver_verdict) {
        alert("no_silver_verdict", "no verdict yet for silver " + *s.silver);
      } else if (s.silver_verdict->finalized_until < oldest_fresh) {
        alert("silver_verdict_stale", "silver's finalized_until " +
                                          FormatIsoMillis(s.silver_verdict->finalized_until.value) +
                                          " is older than expected");
      }
    }
  }
}

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
      s.cleanup = ReadCleanupState(*source, clock, source->ResolveCaptureInstance(table.capture_instance).name);
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
