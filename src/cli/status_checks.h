// The checks of `mssql-cdc status` (status_command.cc) on one table of a pipeline: what the
// facts and control tables (and, with --source, the source) say of it, and the alerts the
// thresholds raise: no facts for 15 minutes, retention headroom minus the time since the last
// facts row under 24 hours (or, for an instance cleanup has not purged yet, the retention less
// the stream's distance behind the source), headroom unknown, ingestion lag over an hour,
// capture lag over 10 minutes, and a verdict (bronze's, and silver's with [silver] unless its
// chunked snapshot is open) older than one period plus the trigger interval plus 15 minutes
// (docs/monitoring.md; docs/pipelines.md lists them).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/pipeline_config.h"
#include "engine/finalization.h"
#include "engine/retention_guard.h"
#include "schema_change/switch_progress.h"
#include "snapshot/chunked_state.h"

namespace mssql_cdc::cli {

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

// The micro-batch rows (event NULL) of the target: how many, the latest by written_at, and
// the latest event row.
void ReadFacts(const arrow::Table& target_rows, TableStatus& status);

// Adds to s.alerts what `limits` raise, at `now`.
void Check(const PipelineConfig& config, const Thresholds& limits, UtcMicros now, TableStatus& s);

// `value` with `digits` decimals.
std::string Fixed(double value, int digits);

}  // namespace mssql_cdc::cli
