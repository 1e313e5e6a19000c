#include "plan/planner.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/errors.h"
#include "core/timezone.h"
#include "source/source.h"

namespace mssql_cdc {

namespace {

// Tiles asked of the source per partition wanted: finer tiles than partitions let merging
// land range bounds near equal row counts, since a bound can only sit on a tile's bound.
constexpr int kTilesPerPartition = 4;
// Beyond this many partitions finer tiles buy nothing: every range holds at least
// kMinRowsPerPartition rows, so more than a few thousand ranges means billions of rows in
// one batch, and NTILE's answer grows with the tile count.
constexpr int kMaxPartitionsForTiling = 1024;

// A run of adjacent tiles: rows in (previous run's bound, bound].
struct Run {
  Lsn bound;
  Lsn next;
  std::int64_t rows = 0;
};

// Tiles with one bound into one run. NTILE cuts by row, so a commit whose rows straddle a
// tile boundary makes two tiles report the same bound; a range ends at a bound, so those
// tiles are one range's worth. A straddling commit's rows in the later tile stay counted
// there although they are read with the earlier range: counts are off by at most a commit
// per bound, which balancing tolerates.
std::vector<Run> RunsOfTiles(const std::vector<SplitPoint>& tiles) {
  std::vector<Run> runs;
  for (const SplitPoint& tile : tiles) {
    if (!runs.empty() && runs.back().bound == tile.bound) {
      runs.back().rows += tile.rows;
    } else {
      runs.push_back(Run{tile.bound, tile.next, tile.rows});
    }
  }
  return runs;
}

// Adjacent runs merged until each holds kMinRowsPerPartition rows; a short tail joins the
// run before it (or stays alone when it is the only one).
std::vector<Run> MergeToMinimumRows(const std::vector<Run>& runs) {
  std::vector<Run> merged;
  Run open;
  bool has_open = false;
  for (const Run& run : runs) {
    if (!has_open) {
      open = run;
      has_open = true;
    } else {
      open.bound = run.bound;
      open.next = run.next;
      open.rows += run.rows;
    }
    if (open.rows >= kMinRowsPerPartition) {
      merged.push_back(open);
      has_open = false;
    }
  }
  if (has_open) {
    if (merged.empty()) {
      merged.push_back(open);
    } else {
      merged.back().bound = open.bound;
      merged.back().next = open.next;
      merged.back().rows += open.rows;
    }
  }
  return merged;
}

// Merges the adjacent pair with the fewest rows together until at most `max_runs` remain,
// which keeps the ranges as even as the tile bounds allow.
void MergeSmallestNeighbours(std::vector<Run>& runs, std::size_t max_runs) {
  while (runs.size() > max_runs) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < runs.size(); ++i) {
      if (runs[i].rows + runs[i + 1].rows < runs[best].rows + runs[best + 1].rows) best = i;
    }
    runs[best].bound = runs[best + 1].bound;
    runs[best].next = runs[best + 1].next;
    runs[best].rows += runs[best + 1].rows;
    runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

}  // namespace

std::optional<Offset> BatchPlanner::PlanEnd(Source& source, const SourceClock& clock,
                                            const Offset& start, const Lsn& target,
                                            std::optional<std::int64_t> max_commits) {
  Lsn end = target;
  if (max_commits) {
    if (*max_commits < 1) {
      throw ConfigError("maxCommitsPerBatch must be at least 1, got " +
                        std::to_string(*max_commits));
    }
    const std::optional<Lsn> nth = source.NthCommitAfter(start.lsn, *max_commits);
    if (!nth) return std::nullopt;  // no commit at all after start
    end = std::min(end, *nth);
  }
  if (end <= start.lsn) return std::nullopt;

  Offset offset{end, std::nullopt};
  // One lookup and a plain zone conversion. A commit in the hour repeated after a fall-back
  // converts as its first reading here (up to an hour early); telling the readings apart
  // needs the commits before it fed to a CommitTimeConverter, which change reads do. The
  // offset's time only labels the position (facts, finalization), and erring early keeps a
  // verdict from leading the data (invariant 2 of docs/invariants.md).
  if (const std::optional<LocalMicros> local = source.CommitTime(end)) {
    offset.commit_ts = clock.ToUtc(*local);
  }
  return offset;
}

std::vector<LsnRange> BatchPlanner::Split(Source& source, const std::string& capture_instance,
                                          const Lsn& from, const Lsn& to, int max_partitions) {
  if (max_partitions < 1) {
    throw ConfigError("numPartitions must be at least 1, got " + std::to_string(max_partitions));
  }
  if (to < from) return {};

  // One partition is the whole range: counting its rows would scan them all once more
  // (NTILE buffers the range) only to read them again.
  if (max_partitions == 1) return {LsnRange{from, to, kUnknownRows, capture_instance}};
  const int n = std::min(max_partitions, kMaxPartitionsForTiling) * kTilesPerPartition;
  const std::vector<Run> runs = RunsOfTiles(source.SplitPoints(capture_instance, from, to, n));
  if (runs.empty()) return {};

  std::vector<Run> ranges = MergeToMinimumRows(runs);
  MergeSmallestNeighbours(ranges, static_cast<std::size_t>(max_partitions));

  // Bounds are tile bounds (commit LSNs), except that the first range starts at `from` and
  // the last ends at `to`: the batch's commits past its last change row (idle entries, other
  // tables' commits) belong to it too.
  std::vector<LsnRange> out;
  out.reserve(ranges.size());
  Lsn range_from = from;
  for (const Run& run : ranges) {
    out.push_back(LsnRange{range_from, run.bound, run.rows, capture_instance});
    range_from = run.next;
  }
  out.back().to = to;
  return out;
}

}  // namespace mssql_cdc
