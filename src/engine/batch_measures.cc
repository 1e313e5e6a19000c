#include "engine/batch_measures.h"

#include <cmath>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/timezone.h"
#include "source/source.h"

namespace mssql_cdc {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

double Seconds(UtcMicros later, UtcMicros earlier) {
  return static_cast<double>(later.value - earlier.value) / kMicrosPerSecond;
}

nlohmann::json MicrosOrNull(const std::optional<UtcMicros>& value) {
  return value ? nlohmann::json(value->value) : nlohmann::json(nullptr);
}

template <typename T>
nlohmann::json ValueOrNull(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<UtcMicros> MicrosOf(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return UtcMicros{value.get<std::int64_t>()};
}

std::optional<double> DoubleOf(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<double>();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

}  // namespace

EndMeasures MeasureEnd(Source& source, const SourceClock& clock, const Retention& retention) {
  EndMeasures end;
  end.retention_watermark_ts = retention.watermark_ts;
  if (auto max_lsn = source.MaxLsn()) {
    if (auto local = source.CommitTimeAtOrBefore(*max_lsn)) {
      end.source_max_commit_ts = clock.ToUtc(*local);
      end.capture_lag_seconds = Seconds(NowUtc(), *end.source_max_commit_ts);
    }
  }
  return end;
}

void FoldMeasures(FactsRow& row, const std::vector<RangeMeasures>& ranges,
                  const std::optional<EndMeasures>& end) {
  if (!ranges.empty() || row.rows.value_or(0) == 0) {
    double seconds = 0;
    std::int64_t bytes = 0;
    std::vector<double> round_trips;
    std::optional<double> waited;
    for (const auto& range : ranges) {
      seconds += range.read_seconds;
      bytes += range.bytes;
      if (range.round_trip_ms) round_trips.push_back(*range.round_trip_ms);
      if (range.network_wait_ms) waited = waited.value_or(0) + *range.network_wait_ms;
    }
    if (waited) row.network_wait_ms = std::llround(*waited);
    std::set<std::string> readers;
    for (const auto& range : ranges) {
      if (range.reader) readers.insert(*range.reader);
    }
    if (!readers.empty() && !row.event && !row.detail) row.detail = nlohmann::json({{"readers", readers}}).dump();
    row.read_seconds = seconds;
    row.read_mb = static_cast<double>(bytes) / kBytesPerMb;
    if (!round_trips.empty()) row.source_rtt_ms = Median(std::move(round_trips));
  }
  std::optional<EndMeasures> measured = end;
  for (const auto& range : ranges) {
    if (!measured && range.end) measured = range.end;
  }
  if (!measured) return;
  row.retention_watermark_ts = measured->retention_watermark_ts;
  row.source_max_commit_ts = measured->source_max_commit_ts;
  row.capture_lag_seconds = measured->capture_lag_seconds;
  if (row.end_commit_ts && measured->retention_watermark_ts) {
    row.retention_headroom_hours =
        Seconds(*row.end_commit_ts, *measured->retention_watermark_ts) / 3600.0;
  }
  if (row.end_commit_ts && measured->source_max_commit_ts) {
    row.ingestion_lag_seconds = Seconds(*measured->source_max_commit_ts, *row.end_commit_ts);
  }
}

std::string RangeMeasuresToJson(const RangeMeasures& measures) {
  nlohmann::json doc = {{"from_lsn", measures.from.ToString()},
                        {"to_lsn", measures.to.ToString()},
                        {"rows", measures.rows},
                        {"bytes", measures.bytes},
                        {"read_seconds", measures.read_seconds},
                        {"round_trip_ms", ValueOrNull(measures.round_trip_ms)},
                        {"network_wait_ms", ValueOrNull(measures.network_wait_ms)}};
  if (measures.reader) doc["reader"] = *measures.reader;
  if (measures.end) {
    doc["end"] = {{"retention_watermark_ts_us", MicrosOrNull(measures.end->retention_watermark_ts)},
                  {"source_max_commit_ts_us", MicrosOrNull(measures.end->source_max_commit_ts)},
                  {"capture_lag_seconds", ValueOrNull(measures.end->capture_lag_seconds)}};
  }
  return doc.dump();
}

RangeMeasures RangeMeasuresFromJson(const std::string& text, const std::string& what) {
  try {
    const auto doc = nlohmann::json::parse(text);
    RangeMeasures measures;
    measures.from = Lsn::Parse(doc.at("from_lsn").get<std::string>());
    measures.to = Lsn::Parse(doc.at("to_lsn").get<std::string>());
    measures.rows = doc.at("rows").get<std::int64_t>();
    measures.bytes = doc.at("bytes").get<std::int64_t>();
    measures.read_seconds = doc.at("read_seconds").get<double>();
    measures.round_trip_ms = DoubleOf(doc.at("round_trip_ms"));
    // Absent from the documents of versions before it was measured.
    if (doc.contains("network_wait_ms")) measures.network_wait_ms = DoubleOf(doc.at("network_wait_ms"));
    if (doc.contains("reader") && doc.at("reader").is_string()) measures.reader = doc.at("reader").get<std::string>();
    if (doc.contains("end")) {
      const auto& end = doc.at("end");
      measures.end = EndMeasures{MicrosOf(end.at("retention_watermark_ts_us")),
                                 MicrosOf(end.at("source_max_commit_ts_us")),
                                 DoubleOf(end.at("capture_lag_seconds"))};
    }
    return measures;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(what + " is not a range metrics document: " + e.what());
  } catch (const Error& e) {
    throw ConfigError(what + " is not a range metrics document: " + e.what());
  }
}

}  // namespace mssql_cdc
