#include "engine/stream_start.h"

#include <algorithm>
#include <thread>

#include "core/timezone.h"

namespace mssql_cdc {

Offset InitialOffset(Source& source, const SourceClock& clock, const CaptureInstanceInfo& instance,
                     const StartingLsn& starting) {
  Offset offset;
  switch (starting.kind) {
    case StartingLsn::Kind::kEarliest:
      offset.lsn = source.MinLsn(instance.name).Decrement();
      break;
    case StartingLsn::Kind::kLatest:
      offset.lsn = source.MaxLsn().value_or(instance.start_lsn.Decrement());
      break;
    case StartingLsn::Kind::kLsn:
      offset.lsn = starting.lsn;
      break;
  }
  if (auto local = source.CommitTimeAtOrBefore(offset.lsn)) {
    offset.commit_ts = clock.ToUtc(*local);
  }
  return offset;
}

int ReadPartitions(const SourceOptions& options) {
  if (options.num_partitions) return static_cast<int>(*options.num_partitions);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace mssql_cdc
