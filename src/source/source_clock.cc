#include "source/source_clock.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace mssql_cdc {

SourceClock ResolveSourceClock(Source& source, std::string_view source_time_zone) {
  std::string lowered(source_time_zone);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lowered.empty() || lowered == "auto") {
    return SourceClock::ForWindowsZone(source.ServerTimeZone());
  }
  return SourceClock::ForWindowsZone(source_time_zone);
}

std::optional<UtcMicros> UtcCommitTime(Source& source, const SourceClock& zone, const Lsn& lsn, bool at_or_before) {
  const auto local = at_or_before ? source.CommitTimeAtOrBefore(lsn) : source.CommitTime(lsn);
  if (!local) return std::nullopt;
  return CommitInstant(zone, *local, [&](LocalMicros from) {
    std::vector<LocalMicros> times;
    for (auto next = source.NthCommitAfter(source.LastCommitAtOrBefore(from).value_or(Lsn()), 1);
         next && *next <= lsn; next = source.NthCommitAfter(*next, 1)) {
      if (const auto time = source.CommitTime(*next)) times.push_back(*time);
    }
    return times;
  });
}

LocalMicros LocalSeekTime(const SourceClock& clock, UtcMicros utc) {
  LocalMicros local = clock.ToLocal(utc);
  if (const auto second = clock.SecondReading(local); second && second->value > utc.value) {
    local.value -= kMicrosPerHour;
  }
  return local;
}

}  // namespace mssql_cdc
