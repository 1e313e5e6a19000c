#include "cli/status_checks.h"

#include <arrow/scalar.h>
#include <arrow/table.h>

#include <iomanip>
#include <sstream>

#include "core/facts_events.h"
#include "delta/table_cells.h"

namespace mssql_cdc::cli {
namespace {

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

std::int64_t PeriodMicros(Granularity granularity) {
  switch (granularity) {
    case Granularity::kMinute: return kMicrosPerMinute;
    case Granularity::kHour: return kMicrosPerHour;
    case Granularity::kDay: return kMicrosPerDay;
  }
  return kMicrosPerHour;
}

}  // namespace

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
  } else if (!s.last && s.last_event_at && facts_event::CompletesSnapshot(*s.last_event)) {
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

}  // namespace mssql_cdc::cli
