// What reading a micro-batch measured, for its facts row (docs/reference/tables.md, docs/monitoring.md).
//
// Each range of a batch measures its own read: rows, Arrow bytes as the source gave them,
// seconds, and one round trip to the server before reading. The batch's last range also
// measures its end: the retention watermark after the read and the source's newest commit.
// A native stream measures in process; in Spark mode the task that reads a range measures it
// and the measures travel to the sink as JSON (metrics files). FoldMeasures turns them into
// the facts row's columns the same way for both, so the two modes report the same figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/time.h"
#include "engine/facts.h"
#include "engine/retention_guard.h"

namespace mssql_cdc {

class Source;
class SourceClock;

struct EndMeasures {
  std::optional<UtcMicros> retention_watermark_ts;  // commit time of the min LSN
  std::optional<UtcMicros> source_max_commit_ts;    // commit time of the max LSN
  std::optional<double> capture_lag_seconds;        // from source_max_commit_ts to its reading
};

struct RangeMeasures {
  Lsn from, to;  // the range read, inclusive
  std::int64_t rows = 0;
  std::int64_t bytes = 0;  // Arrow buffer bytes of the batches the source returned
  double read_seconds = 0;
  std::optional<double> round_trip_ms;  // nullopt where the backend has no server
  // Time the reader was blocked on its socket waiting for the server (ReadWaits); nullopt
  // where the read had no socket of its own to measure.
  std::optional<double> network_wait_ms;
  std::optional<std::string> reader;    // ReadWaits::reader
  std::optional<EndMeasures> end;       // set by the batch's last range only
};

// The end measures after a read whose retention re-check gave `retention`: the max LSN's
// commit time, and the capture lag now.
EndMeasures MeasureEnd(Source& source, const SourceClock& clock, const Retention& retention);

// Fills the measured columns of a micro-batch facts row whose end_commit_ts is set: read
// seconds and MB summed over `ranges`, the round trip's median, the end measures of `end`
// (else of the range that carries them), retention headroom (end_commit_ts - watermark) and
// ingestion lag (source_max_commit_ts - end_commit_ts). A batch with rows but no measured
// range (its metrics were lost) keeps the read columns NULL; network_wait_ms is the ranges'
// waits summed, NULL where no range measured one. A micro-batch row's detail says which readers
// read its ranges ({"readers": ["tds+tls"]}), NULL where none said.
void FoldMeasures(FactsRow& row, const std::vector<RangeMeasures>& ranges,
                  const std::optional<EndMeasures>& end);

std::string RangeMeasuresToJson(const RangeMeasures& measures);
// Throws ConfigError naming `what` when `text` is not what RangeMeasuresToJson writes.
RangeMeasures RangeMeasuresFromJson(const std::string& text, const std::string& what);

}  // namespace mssql_cdc
