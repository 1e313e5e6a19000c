// The key ranges of the chunks a silver call applies from an open chunked snapshot, for the
// waves' range deletes (docs/silver.md): a silver key inside a chunk's [lo, hi) that
// the chunk's rows lack and whose image is older than the chunk's stamp L is deleted as a change
// at L would delete it. Without them a key deleted from the source in a gap the stream never
// read would stay in silver until the snapshot completes and silver is rebuilt by absence.
//
// Ranges exist only for a one-column key that is the snapshot's own key (the plan's), of an
// integer, date or timestamp type (datetime, datetime2, smalldatetime; not datetimeoffset).
// Bounds are compared in the key's units: the integer, days since 1970-01-01, or microseconds.
// A datetime2(7) bound has 100 ns ticks where silver holds microseconds (truncated): a silver
// value v stands for source values in [v, v + 1 µs), so it counts as inside only when all of
// them are: v >= lo rounded up, v < hi rounded down. A key on the edge waits for completion.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "silver/apply_plan.h"
#include "silver/key_units.h"
#include "snapshot/chunk_plan.h"

namespace mssql_cdc {

struct WaveRange {
  int chunk = 0;
  std::optional<std::int64_t> lo;  // inclusive; none: from the first key
  std::optional<std::int64_t> hi;  // exclusive; none: to the last key
  std::string stamp;               // the chunk's L
};

struct WaveRanges {
  std::string key;  // in silver's spelling
  KeyUnit unit = KeyUnit::kInteger;
  std::string snapshot_lsn;        // S: the chunk rows' _snapshot
  std::vector<WaveRange> ranges;   // ordered by lo; they do not overlap

  // The range holding `value` (in the key's units), or null.
  const WaveRange* RangeOf(std::int64_t value) const;
  // Whether some range meets [min, max].
  bool Meets(std::int64_t min, std::int64_t max) const;
};

// Whether the plan applies waves that may delete by range: waves of an open snapshot, and no
// rebuild (which deletes by absence anyway). The plans table need not be read otherwise.
bool WavesMayDeleteByRange(const SilverApplyPlan& plan);

// The ranges of the plan's wave chunks, or nullopt when range deletes do not apply: no wave, a
// rebuild, keys other than the chunk plan's one column, a key
// of another type, a chunk without a stamp, or a bound that does not read in the key's type.
std::optional<WaveRanges> WaveRangesOf(const SilverApplyPlan& plan, const ChunkPlan& chunks,
                                       const std::vector<std::string>& keys, const arrow::Schema& bronze);

}  // namespace mssql_cdc
