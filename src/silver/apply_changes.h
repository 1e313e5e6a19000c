// apply_changes natively (docs/silver.md): keeps a silver table, the current
// state of each source key, from a bronze change log, and records in the control table how far
// it got. One call reads the bronze rows past silver's position at one bronze version and
// applies their latest images in one commit; the position is written after that commit, so a
// crash between the two reruns the same rows, which change nothing the second time.
//
// Silver is rebuilt (every key not in the rebuild goes) when bronze holds a snapshot newer
// than the one silver was last rebuilt from: the first call, a bootstrap on a running stream,
// a re-snapshot after data loss, a chunked snapshot once complete. Its verdict is bronze's,
// read before bronze is, and moves only with a facts table to tell it whether a chunked
// snapshot is open (held while one is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "engine/finalization.h"
#include "silver/spilled_rebuild.h"

namespace mssql_cdc {

struct ApplyChangesOptions {
  std::string bronze;   // bronze table location, as its stream writes it (the facts' target)
  std::string silver;   // silver table location; created when missing
  std::string control;  // control table location; silver's row is kept under `silver`
  // The name bronze's verdict is kept under in the control table (the stream's tracked table);
  // empty: `bronze`.
  std::string bronze_verdict_name;
  std::optional<std::string> facts;  // the stream's facts table
  std::vector<std::string> keys;     // key columns, captured columns of bronze
  // The capture instances whose rows bronze may hold for this table (the configured one and,
  // after a switch, the others of the same table); rows of any other instance are refused.
  std::vector<std::string> capture_instances;
  Granularity granularity = Granularity::kHour;
  // What a rebuild from a snapshot may hold in memory, and where it spills the rest.
  RebuildBudget budget;
};

struct ApplyResult {
  bool rebuilt = false;
  std::optional<std::string> applied_lsn;
  std::optional<UtcMicros> finalized_until;
  bool bronze_found = false;
  std::int64_t upserted = 0, deleted = 0, unchanged = 0;
  std::int64_t bronze_rows = 0;  // bronze rows read
  std::int64_t silver_version = -1;
  // A rebuild's runs written to disk (0 when every row fitted in memory) and their bytes.
  int runs_spilled = 0;
  std::int64_t spilled_bytes = 0;
};

// Checks every input before anything is written (ConfigError naming what is wrong): keys,
// an existing silver table of another bronze or that is not silver, rows of a capture instance
// not listed, chunk rows without a facts table. A missing bronze writes nothing and says so
// (bronze_found false).
ApplyResult ApplyChanges(const ApplyChangesOptions& options);

}  // namespace mssql_cdc
