// reconcile (docs/reconcile.md): proof that a silver table equals its SQL Server
// table, or the keys where it does not. One run, the same in both modes:
//   Tier 1  a one-column integer key is counted and summed per slice of a grid in one scan on
//           the server and on silver, the slices merged into buckets of about bucket_rows;
//           any other key is counted as a whole table;
//   IN_FLIGHT  a bucket that differs is in flight when bronze holds a change to one of its
//           keys after what silver is current to, or the change table one not yet harvested;
//   Tier 2  every bucket that differs (in flight or not) and a `sample` of the matching ones
//           read from the source and compared row by row with silver (row_diff.h), less the
//           keys in flight; an IN_FLIGHT bucket with another key that differs is MISMATCH.
//           A bucket is read in pieces of bounded rows: key ranges of a sliced key, parts
//           split by a hash of the key (key_partitions.h) of any other.
// The source is only read, through the snapshot reader's isolation, never NOLOCK.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/finalization.h"
#include "reconcile/lake_side.h"
#include "reconcile/reconcile_report.h"
#include "source/source.h"

namespace mssql_cdc {

struct ReconcileOptions {
  std::string capture_instance;
  std::vector<std::string> keys;  // empty: the instance's unique index
  std::int64_t bucket_rows = 1'000'000;
  double sample = 0.01;
  std::optional<std::uint64_t> seed;  // nullopt: a random sample
  // [engine] memory_budget: Tier 2 reads a bucket in pieces whose rows of each side take about
  // a quarter of it: key ranges of a one-column integer or date key, else parts split by a hash
  // of the key and spilled under `spill_directory` ([engine] spill_directory; empty: $TMPDIR).
  std::int64_t memory_budget = 256LL << 20;
  std::string spill_directory;
};

struct ReconcileResult {
  ReportRun run;  // run_id, run_at, silver, silver_version, silver_lsn
  std::string source_lsn;
  std::int64_t buckets = 0, match = 0, in_flight = 0, mismatch = 0, hashed = 0;
  std::map<std::string, std::int64_t> failures;  // failure_type -> keys
  // Keys (JSON objects, sorted) with a change committed after silver's LSN, left out of the
  // row comparison; empty when no bucket differed and none was sampled.
  std::vector<std::string> keys_in_flight;
  std::vector<ReportRow> report;
  // Tier 2 of a key split by hash: the most parts a range was compared in (0 when none was),
  // and the bytes spilled to disk for them.
  int parts = 0;
  std::int64_t spilled_bytes = 0;
};

// The LSN silver is current to, from its position: the later of the changes it applied and the
// snapshot it was last rebuilt from; nullopt when it has none.
std::optional<std::string> SilverCurrentTo(const std::optional<SilverPosition>& position);

// ConfigError for bucket_rows < 1 or a sample outside [0, 1]: what both modes check first.
void CheckReconcileOptions(std::int64_t bucket_rows, double sample);

// Runs one reconcile of `lake` against `source`. Checks before reading anything: the options,
// keys that are captured columns of silver, silver being silver of this bronze, and silver
// having a position. Writes nothing.
ReconcileResult Reconcile(const ReconcileOptions& options, const LakeState& state, Source& source,
                          LakeSide& lake);

}  // namespace mssql_cdc
