#include "engine/stream_start.h"

#include <algorithm>
#include <thread>

#include "core/errors.h"
#include "core/timezone.h"

namespace mssql_cdc {
namespace {

// Commit times of the LSN an instance was enabled at and of the instance's create_date agree
// to within this; a min LSN committed later than that was moved there by cleanup.
constexpr std::int64_t kEnableSkewMicros = 1'000'000;

// Whether the instance's min LSN is still where the instance began: no cleanup has moved it.
bool MinLsnIsWhereInstanceBegan(Source& source, const CaptureInstanceInfo& instance,
                                const Lsn& min_lsn) {
  const auto committed = source.CommitTimeAtOrBefore(min_lsn);
  return !committed || committed->value <= instance.create_date.value + kEnableSkewMicros;
}

}  // namespace

void CheckStartingLsn(Source& source, const CaptureInstanceInfo& instance, const Lsn& lsn) {
  const std::optional<Lsn> max_lsn = source.MaxLsn();
  if (!max_lsn || lsn > *max_lsn) {
    throw ConfigError(
        "startingLsn " + lsn.ToString() + " is past the database's max LSN " +
        (max_lsn ? max_lsn->ToString() : std::string("(none yet: nothing was captured)")) +
        ": no change has that LSN yet, so the stream would wait for it without reading "
        "anything; give an LSN at or below the max LSN, or startingLsn=latest");
  }
  const Lsn min_lsn = source.MinLsn(instance.name);
  if (lsn.Increment() < min_lsn && MinLsnIsWhereInstanceBegan(source, instance, min_lsn)) {
    throw ConfigError(
        "startingLsn " + lsn.ToString() + " is before capture instance '" + instance.name +
        "' began: its first LSN is " + min_lsn.ToString() +
        " and it holds no change before that; give startingLsn=earliest to start at its "
        "first change, or an LSN from " + min_lsn.Decrement().ToString() + " on");
  }
  // Below a min LSN that cleanup moved: the first batch reports the purged changes
  // (DataLossError, or a data_skipped row with failOnDataLoss=false).
}

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
      CheckStartingLsn(source, instance, starting.lsn);
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
