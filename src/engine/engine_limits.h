// What one process running streams may use, whatever the data (invariant 10 of docs/invariants.md): the memory of
// the batches in flight, the connections to the source, the threads that run batches, the
// number of streams. The pipeline file's [engine] section; the same fields in the C++ API.
//
// The memory budget is shared by the ranges that may be read at once (one per connection in
// use): each range gets budget / ranges, and spends it on the Arrow batches its source
// reader makes (an eighth), the rows its data file stream holds before writing a row group
// (a half), and the Parquet encoder and the reader's fetch buffers (the rest). A batch of any
// size then holds at most that much per range. A single value longer than a range's share
// (a (max) column) is still read whole, into a batch of one row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "source/source.h"

namespace mssql_cdc {

struct EngineLimits {
  std::int64_t memory_budget = 256LL << 20;  // bytes, for the rows of batches in flight
  int connections = 8;   // Sources open at once, each with at most one connection
  int workers = 4;       // threads that run the streams' batches
  int max_streams = 1000;
  // Where a silver rebuild writes the runs that do not fit in memory_budget: a local directory
  // that exists. Empty: $TMPDIR, else /tmp.
  std::string spill_directory;

  // From the [engine] keys memory_budget ("512MiB", "1GB": KiB/MiB/GiB are powers of 1024,
  // KB/MB/GB of 1000; a bare number is refused), connections, workers, max_streams,
  // spill_directory (names ignoring case, snake_case). ConfigError naming the key for an
  // unknown key or a bad value, or a spill_directory that is not a writable directory.
  static EngineLimits Parse(const Options& options);
  // ConfigError for values out of range (memory_budget at least 1 MiB, connections, workers
  // and max_streams at least 1).
  void Validate() const;
};

// "512 MiB" and the like: KiB, MiB, GiB (1024-based) or KB, MB, GB (1000-based), or B, after
// a whole number; spaces between are allowed, case is not ("mb" is refused as ambiguous
// between megabits and megabytes). ConfigError naming `what` otherwise.
std::int64_t ParseByteSize(std::string_view text, std::string_view what);
// 268435456 -> "256 MiB", 1153433 -> "1.1 MiB".
std::string FormatByteSize(std::int64_t bytes);

// How one range read spends its share of the budget.
struct RangeMemory {
  std::int64_t share = 0;              // budget / concurrent ranges
  std::int64_t arrow_batch_bytes = 0;  // a source reader's record batch ends past this
  std::int64_t row_group_bytes = 0;    // a data file stream writes a row group past this
};
RangeMemory RangeMemoryFor(const EngineLimits& limits, int concurrent_ranges);

// The Arrow bytes of one row of `columns` at their declared widths (strings at 3 bytes a
// character, the most UTF-8 takes for one UTF-16 unit), each (max) column counted at the
// piece size long values are read in (1 MiB), plus the metadata columns.
std::int64_t DeclaredRowBytes(const std::vector<CapturedColumn>& columns);

// ConfigError when a source reader's batch cannot hold one such row of `capture_instance`,
// saying how much memory_budget it needs.
void CheckRowFitsBudget(const std::vector<CapturedColumn>& columns,
                        const std::string& capture_instance, const EngineLimits& limits,
                        int concurrent_ranges);

}  // namespace mssql_cdc
