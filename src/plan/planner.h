// Micro-batch planning (invariant 1 of docs/invariants.md): where the next batch ends and how it is split.
//
// A batch reads (start, end] where end is a commit LSN of cdc.lsn_time_mapping no later than
// the max LSN (or the availableNow target), bounded by maxCommitsPerBatch commits (idle and
// other tables' commits count, as in the reference). Its end offset carries the commit time
// of `end` in UTC. A batch is split into commit-aligned ranges of at least
// kMinRowsPerPartition change rows, at most `max_partitions` of them, from the source's NTILE
// split points; a commit is never split across two ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/offset.h"

namespace mssql_cdc {

class Source;
class SourceClock;

inline constexpr std::int64_t kMinRowsPerPartition = 50'000;
inline constexpr std::int64_t kUnknownRows = -1;

// One read of a batch: rows with __$start_lsn in [from, to], both commit-aligned.
struct LsnRange {
  Lsn from;
  Lsn to;
  // Change rows of the capture instance in the range, from the split; kUnknownRows when the
  // range was not split (one partition), which costs no count.
  std::int64_t rows = 0;
  // The capture instance whose change table the range is read from (a batch that crosses a
  // newer instance's start reads each side from its own).
  std::string capture_instance;
};

class BatchPlanner {
 public:
  // The end offset of the batch after `start`: the n-th commit after start.lsn when
  // `max_commits` is set, else `target` (the max LSN, or the availableNow target), whichever
  // is smaller; nullopt when nothing follows start (end <= start). The commit time is the
  // UTC time of the end LSN's lsn_time_mapping entry.
  static std::optional<Offset> PlanEnd(Source& source, const SourceClock& clock,
                                       const Offset& start, const Lsn& target,
                                       std::optional<std::int64_t> max_commits);

  // Commit-aligned ranges covering [from, to] for `capture_instance`: tiles of the source's
  // split points merged until each holds kMinRowsPerPartition rows (a short tail joins the
  // range before), at most `max_partitions`. One range [from, to] when the rows are fewer
  // than 2 * kMinRowsPerPartition; no range when there are no rows. With max_partitions 1
  // the source is not asked: one range [from, to] of kUnknownRows rows.
  static std::vector<LsnRange> Split(Source& source, const std::string& capture_instance,
                                     const Lsn& from, const Lsn& to, int max_partitions);
};

}  // namespace mssql_cdc
