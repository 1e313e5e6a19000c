// The state of a Delta table at one version, replayed from its log: the newest checkpoint
// named by _last_checkpoint, then the JSON commits after it.
//
// Replay refuses, with an error naming the file, a missing commit between the checkpoint and
// the newest version, a commit that is not valid JSON, and a checkpoint that does not match
// _last_checkpoint; it never returns a silently empty or partial table.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "delta/actions.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

struct Snapshot {
  std::int64_t version = -1;  // -1: no table
  Protocol protocol;
  Metadata metadata;
  std::map<std::string, AddFile> files;       // active files by path
  std::map<std::string, std::int64_t> app_versions;  // latest txn version per app id
  // Removed files kept as tombstones for VACUUM until they expire; checkpoints carry them.
  std::map<std::string, RemoveFile> tombstones;
  std::int64_t last_checkpoint_version = -1;

  // The Arrow schema of metadata.schema_string.
  std::shared_ptr<arrow::Schema> schema() const;
};

// Replays the log under `table_root` up to its newest version (or `version` when given).
// From the checkpoint _last_checkpoint names (when `version` is not older) it lists only the
// log files after it; otherwise it lists the whole log. A missing commit between the start
// and the newest version is an error, never the end of the log.
// Throws SourceError naming the path when there is no _delta_log.
Snapshot ReadSnapshot(storage::FileSystem& fs, const std::string& table_root,
                      std::optional<std::int64_t> version = std::nullopt);

}  // namespace mssql_cdc::delta
