#include "sim_server/at_time_zone.h"

#include "core/errors.h"
#include "sim_server/server_errors.h"

namespace mssql_cdc::sim_server {
namespace {

// DATEPART(TZOFFSET, local AT TIME ZONE zone).
int OffsetOfLocal(const SourceClock& zone, LocalMicros local) {
  return zone.OffsetMinutesAt(zone.ToUtc(local));
}

}  // namespace

SourceClock AtTimeZone(const std::string& windows_name) {
  try {
    return SourceClock::ForWindowsZone(windows_name);
  } catch (const ConfigError&) {
    throw SqlError(errors::InvalidTimeZone(windows_name));
  }
}

std::optional<int> RangeOffset(const SourceClock& zone, LocalMicros first, LocalMicros last) {
  const std::int64_t days = FloorDiv(last.value, kMicrosPerDay) - FloorDiv(first.value, kMicrosPerDay);
  if (days >= 7) return std::nullopt;
  const int before = OffsetOfLocal(zone, LocalMicros{first.value - 3 * kMicrosPerHour});
  const int after = OffsetOfLocal(zone, LocalMicros{last.value + 3 * kMicrosPerHour});
  if (before != after) return std::nullopt;
  return after;
}

}  // namespace mssql_cdc::sim_server
