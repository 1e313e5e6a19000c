#include "delta/log_replay.h"

#include <arrow/type.h>

#include <set>

#include "core/errors.h"
#include "delta/checkpoint.h"
#include "storage/file_system.h"
#include "delta/log_files.h"
#include "delta/protocol.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {

TableState ReplayLog(storage::FileSystem& fs, const std::string& table_root,
                      std::optional<std::int64_t> version) {
  std::string log = LogDirectory(table_root);
  // _last_checkpoint is read before the listing: a writer creates a checkpoint before it names
  // it there, so the listing then holds every checkpoint it names, even while others write.
  auto last = ReadLastCheckpoint(fs, table_root);
  // Listing-light: from the checkpoint _last_checkpoint names, only the names after it are
  // listed (one request per thousand names in an object store), and still every one of them,
  // so that a missing commit is a gap and not the end of the log.
  const bool from_last_checkpoint = last && (!version || *version >= last->version);
  std::set<std::int64_t> commits;
  std::set<std::int64_t> checkpoints;
  const auto listing = from_last_checkpoint
                           ? fs.ListAfter(log, VersionFilePrefix(last->version))
                           : fs.List(log);
  for (const auto& entry : listing) {
    if (entry.is_directory) continue;
    if (auto v = CommitVersionOf(entry.name)) commits.insert(*v);
    if (auto v = CheckpointVersionOf(entry.name)) checkpoints.insert(*v);
  }
  if (from_last_checkpoint && !checkpoints.count(last->version)) {
    throw SourceError(CheckpointPath(table_root, last->version) + " is missing but " +
                      LastCheckpointPath(table_root) + " names it");
  }
  if (commits.empty() && checkpoints.empty()) {
    throw SourceError(table_root + " is not a Delta table: " + log +
                      " holds no commit files (<version>.json)");
  }
  std::int64_t newest = std::max(commits.empty() ? -1 : *commits.rbegin(),
                                 checkpoints.empty() ? -1 : *checkpoints.rbegin());
  std::int64_t target = version.value_or(newest);
  if (target < 0 || target > newest) {
    throw SourceError(table_root + " has no version " + std::to_string(target) +
                      "; its newest is " + std::to_string(newest));
  }

  // Start from the newest checkpoint at or before the target: the one _last_checkpoint names
  // (checked above to exist, and below to match), or a newer one it does not name yet (a
  // writer that stopped between the two files), which is used as well, as a complete file.
  std::int64_t start = from_last_checkpoint ? last->version : -1;
  auto newer = checkpoints.upper_bound(target);
  if (newer != checkpoints.begin()) start = std::max(start, *std::prev(newer));

  TableState snapshot;
  if (start >= 0) {
    const LastCheckpoint* expected = last && last->version == start ? &*last : nullptr;
    ApplyActions(snapshot, ReadCheckpoint(fs, table_root, start, expected), start);
    snapshot.last_checkpoint_version = start;
  }
  for (std::int64_t v = start + 1; v <= target; ++v) {
    std::optional<std::vector<Action>> actions;
    if (commits.count(v)) actions = ReadCommit(fs, table_root, v);
    if (!actions) {
      throw SourceError(CommitPath(table_root, v) + " is missing: the log of " + table_root +
                        " has a gap before version " + std::to_string(target));
    }
    ApplyActions(snapshot, *actions, v);
  }
  if (snapshot.metadata.id.empty() || snapshot.metadata.schema_string.empty()) {
    throw SourceError(log + " holds no metaData action up to version " +
                      std::to_string(target) + ": the log is incomplete");
  }
  CheckCanRead(snapshot.protocol, snapshot.metadata, table_root);
  // A schema this engine cannot read fails here, naming the log, not at first use.
  FromDeltaSchemaString(snapshot.metadata.schema_string, log + " metaData");
  return snapshot;
}

}  // namespace mssql_cdc::delta
