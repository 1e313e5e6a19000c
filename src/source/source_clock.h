// Chooses the clock that converts a source's commit times to UTC, from the sourceTimeZone
// option: "auto" asks the source for its zone (CURRENT_TIMEZONE_ID()); anything else is a
// Windows zone name. One rule for every backend and for both ways of running. And converts one
// lsn_time_mapping entry's commit time as a read of the entries in LSN order would.
#pragma once

#include <optional>
#include <string_view>

#include "core/timezone.h"
#include "source/source.h"

namespace mssql_cdc {

SourceClock ResolveSourceClock(Source& source, std::string_view source_time_zone);

// The UTC commit time of the entry at `lsn` (or, `at_or_before`, of the last entry at or before
// it); nullopt when there is none. A local time in the hour repeated after a fall-back is its
// first or second reading as the entries from three hours before it, read in LSN order, say
// (CommitTimeConverter): the one rule mssql-cdc-pyspark 0.8.0's T-SQL spells too.
std::optional<UtcMicros> UtcCommitTime(Source& source, const SourceClock& clock, const Lsn& lsn,
                                       bool at_or_before = false);

// The server-clock time to look up the last commit at or before `utc` by (Source::
// LastCommitAtOrBefore): its local time, but an hour earlier in the first reading of a repeated
// hour, whose local times the second reading's commits share and come after. Never later than
// the exact commit; in that hour up to an hour earlier, as mssql-cdc-pyspark 0.8.0 also seeks.
LocalMicros LocalSeekTime(const SourceClock& clock, UtcMicros utc);

}  // namespace mssql_cdc
