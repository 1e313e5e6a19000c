// The retention guard (invariant 4 of docs/invariants.md): a range CDC cleanup has purged is never read as if it
// were whole. The stream checks before a batch reads (the first LSN to read is below the
// capture instance's min LSN) and again after (cleanup ran during the read: the change table
// silently returns what is left, so only this re-check can tell).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/lsn.h"
#include "core/offset.h"
#include "core/time.h"

namespace mssql_cdc {

class Source;
class SourceClock;

struct Retention {
  Lsn min_lsn;                             // sys.fn_cdc_get_min_lsn(ci)
  std::optional<UtcMicros> watermark_ts;   // its commit time, UTC
};

// The instance's min LSN and its commit time. Throws NotFoundError when the instance no
// longer exists (its min LSN reads zero), e.g. CDC was disabled on the table.
Retention ReadRetention(Source& source, const SourceClock& clock,
                        const std::string& capture_instance);

// Whether CDC cleanup has purged any change of a capture instance yet. Until it has, the
// instance's min LSN is the one it was enabled at, so its watermark is at or before the
// instance's create_date and the time from the watermark to a batch's end is the instance's
// age, not the room left before cleanup reaches unread changes (spec 4.9).
struct CleanupState {
  UtcMicros enabled_ts;                   // cdc.change_tables.create_date, UTC
  std::optional<UtcMicros> watermark_ts;  // as ReadRetention's
  bool purged_yet = false;                // the watermark is past the enable
};
// `capture_instance` is resolved as a stream resolves it (exact name, then ignoring case).
CleanupState ReadCleanupState(Source& source, const SourceClock& clock, const std::string& capture_instance);
// The rule of CleanupState::purged_yet, for a caller that has both times already.
bool CleanupHasPurged(UtcMicros enabled_ts, const std::optional<UtcMicros>& watermark_ts);

// Whether changes at or after `first_to_read` have been purged: min LSN > first_to_read.
inline bool Purged(const Retention& retention, const Lsn& first_to_read) {
  return retention.min_lsn > first_to_read;
}

// The DataLossError of a purged batch: names the capture instance, the last processed commit
// (time and LSN) and the retention watermark, says nothing was written and how to go on.
// `batch_id` is the batch's id, or nullopt where the caller does not know it (Spark mode's
// driver and executors: Spark numbers the batches), and the message then says "this batch".
[[noreturn]] void ThrowDataLoss(const std::string& capture_instance, const Offset& last_processed,
                                const Retention& retention, std::optional<std::int64_t> batch_id,
                                bool during_read);

}  // namespace mssql_cdc
