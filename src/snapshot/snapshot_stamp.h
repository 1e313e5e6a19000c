// The LSN a snapshot's rows are stamped with (invariant 5 of docs/invariants.md): recorded before any row is read,
// so that a row may be newer than its stamp, never older, and a stream starting after it
// misses no change.
#pragma once

#include <optional>

#include "core/lsn.h"
#include "core/offset.h"
#include "source/source.h"
#include "source/source_clock.h"

namespace mssql_cdc {

// `given` (snapshotLsn) with its commit time, or the max LSN now; while capture has not yet
// reached a new instance (max LSN below its start), the instance's first LSN minus one, so a
// stream from the stamp still reads its first commit. Commit times are UTC.
Offset SnapshotStamp(Source& source, const SourceClock& clock, const CaptureInstanceInfo& instance,
                     const std::optional<Lsn>& given = std::nullopt);

}  // namespace mssql_cdc
