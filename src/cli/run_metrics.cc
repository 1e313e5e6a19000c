#include "cli/run_metrics.h"

#include <sstream>
#include <vector>

#include "engine/finalization.h"

namespace mssql_cdc::cli {
namespace {

// A label value with \, " and newline escaped, as the text format asks.
std::string Label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

}  // namespace

std::optional<UtcMicros> CandidateVerdict(const PipelineConfig& config, const StreamProgress& p) {
  if (!config.many.control_table || !p.end || !p.end->commit_ts) return std::nullopt;
  return Truncate(*p.end->commit_ts, config.many.granularity);
}

std::string RunMetricsText(const PipelineConfig& config, const StreamGroup& group, UtcMicros now) {
  struct Sample {
    std::string table;
    std::optional<double> value;
  };
  const std::vector<Family> families = {
      {"mssql_cdc_table_running", "gauge", "1 while the table's stream runs, 0 once it ended."},
      {"mssql_cdc_table_failed", "gauge", "1 when the table's stream ended with an error."},
      {"mssql_cdc_batches_total", "counter", "Micro-batches this run committed."},
      {"mssql_cdc_rows_total", "counter", "Change rows this run wrote to bronze."},
      {"mssql_cdc_last_batch_rows", "gauge", "Change rows of the last committed batch."},
      {"mssql_cdc_last_batch_seconds", "gauge", "How long the last committed batch took."},
      {"mssql_cdc_capture_lag_seconds", "gauge", "Source commit of the newest change to its capture, last batch."},
      {"mssql_cdc_ingestion_lag_seconds", "gauge", "Newest source commit minus the last batch's end commit."},
      {"mssql_cdc_retention_headroom_hours", "gauge",
       "Last batch's end commit minus CDC cleanup's watermark: how far behind cleanup reading is."},
      {"mssql_cdc_retention_cleanup_purged", "gauge",
       "1 once CDC cleanup has purged changes of the capture instance; 0 before, when the headroom is only the instance's age."},
      {"mssql_cdc_end_commit_timestamp_seconds", "gauge", "Commit time (UTC) of the last change in bronze."},
      {"mssql_cdc_verdict_timestamp_seconds", "gauge", "finalized_until the last batch justifies (UTC)."},
      {"mssql_cdc_verdict_age_seconds", "gauge", "Now minus that finalized_until."},
  };
  std::vector<std::vector<Sample>> samples(families.size());
  auto seconds = [](UtcMicros t) { return static_cast<double>(t.value) / 1e6; };
  for (const auto& ci : group.order()) {
    const auto found = group.streams().find(ci);
    if (found == group.streams().end()) continue;
    const Stream& stream = *found->second;
    const StreamProgress p = stream.progress();
    const auto verdict = CandidateVerdict(config, p);
    const std::optional<UtcMicros> end_commit = p.end ? p.end->commit_ts : std::nullopt;
    const std::vector<std::optional<double>> values = {
        stream.active() ? 1.0 : 0.0,
        !stream.active() && stream.error() ? 1.0 : 0.0,
        static_cast<double>(p.batches),
        static_cast<double>(p.total_rows),
        p.batches > 0 ? std::optional<double>(static_cast<double>(p.last_rows)) : std::nullopt,
        p.last_batch_seconds,
        p.capture_lag_seconds,
        p.ingestion_lag_seconds,
        p.retention_headroom_hours,
        p.cleanup_purged_yet ? std::optional<double>(*p.cleanup_purged_yet ? 1.0 : 0.0) : std::nullopt,
        end_commit ? std::optional<double>(seconds(*end_commit)) : std::nullopt,
        verdict ? std::optional<double>(seconds(*verdict)) : std::nullopt,
        verdict ? std::optional<double>(static_cast<double>(now.value - verdict->value) / 1e6) : std::nullopt,
    };
    for (std::size_t f = 0; f < families.size(); ++f) samples[f].push_back({ci, values[f]});
  }
  std::ostringstream out;
  out.precision(15);
  for (std::size_t f = 0; f < families.size(); ++f) {
    out << "# HELP " << families[f].name << " " << families[f].help << "\n";
    out << "# TYPE " << families[f].name << " " << families[f].type << "\n";
    for (const auto& sample : samples[f]) {
      if (!sample.value) continue;  // not measured yet: no sample rather than a made-up 0
      out << families[f].name << "{table=\"" << Label(sample.table) << "\"} " << *sample.value << "\n";
    }
  }
  return out.str();
}

}  // namespace mssql_cdc::cli
