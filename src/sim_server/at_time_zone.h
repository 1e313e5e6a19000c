// The AT TIME ZONE arithmetic of the statements mssql-cdc-pyspark 0.8.0 sends a server on
// another time zone than UTC. Its conversion of a commit time looks back three hours in LSN
// order in the hour repeated after a fall-back: that is the engine's own rule, UtcCommitTime
// (source/source_clock.h), which sim serve answers with.
#pragma once

#include <optional>
#include <string>

#include "core/time.h"
#include "core/timezone.h"

namespace mssql_cdc::sim_server {

// The zone a Windows name given to AT TIME ZONE names; SqlError 9820 for a name it does not know.
SourceClock AtTimeZone(const std::string& windows_name);

// 0.8.0's probe of the entries of a range whose local times are [first, last]: the zone's offset
// when they span under 7 calendar days (DATEDIFF(day, ...)) and the offset AT TIME ZONE gives
// three hours before `first` equals the one three hours after `last`; else nullopt.
std::optional<int> RangeOffset(const SourceClock& zone, LocalMicros first, LocalMicros last);

}  // namespace mssql_cdc::sim_server
