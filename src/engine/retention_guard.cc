#include "engine/retention_guard.h"

#include "core/errors.h"
#include "core/timezone.h"
#include "source/source.h"

namespace mssql_cdc {

Retention ReadRetention(Source& source, const SourceClock& clock,
                        const std::string& capture_instance) {
  Retention retention;
  retention.min_lsn = source.MinLsn(capture_instance);
  if (retention.min_lsn.IsZero()) {
    throw NotFoundError("capture instance '" + capture_instance +
                        "' no longer exists (CDC was disabled on its table, or the instance was "
                        "dropped); the stream cannot go on reading it");
  }
  if (auto local = source.CommitTimeAtOrBefore(retention.min_lsn)) {
    retention.watermark_ts = clock.ToUtc(*local);
  }
  return retention;
}

bool CleanupHasPurged(UtcMicros enabled_ts, const std::optional<UtcMicros>& watermark_ts) {
  // The enable's LSN is the max LSN when CDC was enabled, whose commit may be a little earlier
  // or, rounded to datetime's 1/300 s, a little later than create_date: a second of slack.
  constexpr std::int64_t kSlack = kMicrosPerSecond;
  return watermark_ts && watermark_ts->value > enabled_ts.value + kSlack;
}

CleanupState ReadCleanupState(Source& source, const SourceClock& clock, const std::string& capture_instance) {
  const CaptureInstanceInfo instance = source.ResolveCaptureInstance(capture_instance);
  CleanupState state;
  state.enabled_ts = clock.ToUtc(instance.create_date);
  state.watermark_ts = ReadRetention(source, clock, instance.name).watermark_ts;
  state.purged_yet = CleanupHasPurged(state.enabled_ts, state.watermark_ts);
  return state;
}

void ThrowDataLoss(const std::string& capture_instance, const Offset& last_processed,
                   const Retention& retention, std::optional<std::int64_t> batch_id,
                   bool during_read) {
  const std::string batch = batch_id ? "batch " + std::to_string(*batch_id) : "this batch";
  const std::string last_ts =
      last_processed.commit_ts ? FormatIsoMillis(last_processed.commit_ts->value) + " UTC"
                               : std::string("an unknown time");
  const std::string watermark =
      retention.watermark_ts ? FormatIsoMillis(retention.watermark_ts->value) + " UTC"
                             : std::string("unknown");
  throw DataLossError(
      "capture instance '" + capture_instance + "': CDC cleanup purged changes this stream "
      "has not read" + (during_read ? " (while " + batch + " read them)" : std::string()) +
      ". Last processed commit: " + last_ts + " (LSN " + last_processed.lsn.ToString() +
      "); retention watermark: " + watermark + " (min LSN " + retention.min_lsn.ToString() +
      "). Nothing was written for " + batch +
      ". A re-snapshot is required: take a new snapshot into a new checkpoint with a new "
      "app_id; or set failOnDataLoss=false to record the gap in the facts and continue. To "
      "avoid this, keep CDC retention longer than the stream's longest stop.");
}

}  // namespace mssql_cdc
