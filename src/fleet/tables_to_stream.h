// Which capture instances a pipeline over every table of a database streams: one per source
// table, the instance its table was enabled with first (a stream follows its table to a newer
// instance itself at the switch, docs/schema-changes.md), and never the heartbeat's
// (sql/heartbeat.sql), whose table exists only to move the max LSN on a quiet database.
// `mssql-cdc tables` prints the result as a pipeline's tables line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "source/source.h"

namespace mssql_cdc {

// The capture instance sql/heartbeat.sql creates.
inline constexpr std::string_view kHeartbeatCaptureInstance = "dbo_cdc_heartbeat";

struct ListedInstance {
  std::string capture_instance;
  std::string table;       // schema.table
  bool stream = false;     // one of the tables to stream
  std::string why_not;     // when not: the heartbeat, or the newer instance of a table
};

// Every instance, ordered by table then enable time, each judged.
std::vector<ListedInstance> JudgeInstances(const std::vector<CaptureInstanceInfo>& instances);

}  // namespace mssql_cdc
