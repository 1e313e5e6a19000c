// Replays a Delta table's log into its TableState: the newest checkpoint named by
// _last_checkpoint, then the JSON commits after it.
//
// Replay refuses, with an error naming the file, a missing commit between the checkpoint and
// the newest version, a commit that is not valid JSON, and a checkpoint that does not match
// _last_checkpoint; it never returns a silently empty or partial table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "delta/table_state.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

// Replays the log under `table_root` up to its newest version (or `version` when given).
// From the checkpoint _last_checkpoint names (when `version` is not older) it lists only the
// log files after it; otherwise it lists the whole log. A missing commit between the start
// and the newest version is an error, never the end of the log.
// Throws SourceError naming the path when there is no _delta_log.
TableState ReplayLog(storage::FileSystem& fs, const std::string& table_root,
                     std::optional<std::int64_t> version = std::nullopt);

}  // namespace mssql_cdc::delta
