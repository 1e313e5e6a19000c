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
  if (!zone.SecondReading(*local)) return zone.ToUtc(*local);
  // In the repeated hour: the entries after the last one three hours older, up to this one, in
  // LSN order, tell which reading it is.
  const LocalMicros look_back{local->value - 3 * kMicrosPerHour};
  std::optional<Lsn> at = source.LastCommitAtOrBefore(look_back);
  CommitTimeConverter converter(zone);
  std::optional<UtcMicros> utc;
  for (auto next = source.NthCommitAfter(at.value_or(Lsn()), 1); next && *next <= lsn;
       next = source.NthCommitAfter(*next, 1)) {
    if (const auto time = source.CommitTime(*next)) utc = converter.Next(*time);
  }
  return utc ? utc : zone.ToUtc(*local);
}

LocalMicros LocalSeekTime(const SourceClock& clock, UtcMicros utc) {
  LocalMicros local = clock.ToLocal(utc);
  if (const auto second = clock.SecondReading(local); second && second->value > utc.value) {
    local.value -= kMicrosPerHour;
  }
  return local;
}

}  // namespace mssql_cdc
