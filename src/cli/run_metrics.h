// What `mssql-cdc run --metrics-port` serves: each table's health in Prometheus text format
// (mssql_cdc_* metrics labelled by table), read from the running streams' progress. The same
// figures `mssql-cdc status` checks from the facts and control tables, as they are in this
// process now.
#pragma once

#include <optional>
#include <string>

#include "cli/pipeline_config.h"
#include "core/time.h"
#include "engine/stream.h"
#include "fleet/stream_group.h"

namespace mssql_cdc::cli {

// The verdict a table's last committed batch justifies: its end commit time truncated to the
// pipeline's granularity; nullopt without a control table or a batch.
std::optional<UtcMicros> CandidateVerdict(const PipelineConfig& config, const StreamProgress& progress);

// The metrics of every table of the group at `now`.
std::string RunMetricsText(const PipelineConfig& config, const StreamGroup& group, UtcMicros now);

}  // namespace mssql_cdc::cli
