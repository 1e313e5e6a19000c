// The layout of _delta_log and the reading and applying of commit files, shared by snapshot
// replay, checkpoints and the committing table.
//
// Commit files are _delta_log/<version, 20 digits>.json; classic checkpoints are
// _delta_log/<version, 20 digits>.checkpoint.parquet. Other names in the directory (temp
// files, .crc files, multi-part or UUID checkpoints) are not ours to interpret here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_state.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

std::string LogDirectory(const std::string& table_root);
std::string CommitPath(const std::string& table_root, std::int64_t version);
std::string CheckpointPath(const std::string& table_root, std::int64_t version);
std::string LastCheckpointPath(const std::string& table_root);
// The 20-digit name every log file of `version` begins with; every file of a later version
// sorts after it.
std::string VersionFilePrefix(std::int64_t version);

// The version a log file name stands for, when it is a commit (or a classic checkpoint).
std::optional<std::int64_t> CommitVersionOf(const std::string& file_name);
std::optional<std::int64_t> CheckpointVersionOf(const std::string& file_name);

// One commit's contents, one action per line, newline-terminated.
std::string EncodeCommit(const std::vector<Action>& actions);
// The actions of commit `version`; nullopt when its file does not exist. Throws SourceError
// naming the file (and line) when it is empty or holds a malformed action.
std::optional<std::vector<Action>> ReadCommit(storage::FileSystem& fs, const std::string& table_root,
                                              std::int64_t version);

// Applies one commit's (or a checkpoint's) actions to `snapshot` and sets its version.
void ApplyActions(TableState& snapshot, const std::vector<Action>& actions, std::int64_t version);

}  // namespace mssql_cdc::delta
