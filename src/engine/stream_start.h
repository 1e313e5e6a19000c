// Where a stream starts and how many ranges a batch is read in: rules the native Stream and
// Spark mode's ChangeFeed share, so a stream starts at the same position and splits its
// batches the same way whichever of them drives it.
#pragma once

#include "core/offset.h"
#include "core/source_options.h"
#include "source/source.h"

namespace mssql_cdc {

class SourceClock;

// The offset a new stream without bootstrap starts after (startingLsn): earliest is the LSN
// before the instance's min LSN; latest is the max LSN, or, while lsn_time_mapping is empty,
// the LSN before the instance's start; a given LSN counts as processed, so the first batch
// reads what follows it (CheckStartingLsn). The commit time is that of the last lsn_time_mapping entry at or
// before the LSN, in UTC, or unknown when there is none.
Offset InitialOffset(Source& source, const SourceClock& clock, const CaptureInstanceInfo& instance,
                     const StartingLsn& starting);

// Refuses (ConfigError) a given startingLsn a stream could never read from: one past the max
// LSN, or one before the capture instance began (below its min LSN while no cleanup has moved
// that). Below a min LSN that cleanup moved is left to the first batch's data-loss check.
void CheckStartingLsn(Source& source, const CaptureInstanceInfo& instance, const Lsn& lsn);

// The most ranges a batch is split into: numPartitions, or the machine's hardware threads
// when it is not given.
int ReadPartitions(const SourceOptions& options);

}  // namespace mssql_cdc
