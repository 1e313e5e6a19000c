#include "snapshot/snapshot_stamp.h"

namespace mssql_cdc {

Offset SnapshotStamp(Source& source, const SourceClock& clock, const CaptureInstanceInfo& instance,
                     const std::optional<Lsn>& given) {
  Offset offset;
  if (given) {
    offset.lsn = *given;
  } else {
    const auto max_lsn = source.MaxLsn();
    offset.lsn = (max_lsn && *max_lsn >= instance.start_lsn) ? *max_lsn : instance.start_lsn.Decrement();
  }
  if (auto local = source.CommitTimeAtOrBefore(offset.lsn)) {
    offset.commit_ts = clock.ToUtc(*local);
  } else {
    offset.commit_ts = clock.ToUtc(instance.create_date);
  }
  return offset;
}

}  // namespace mssql_cdc
