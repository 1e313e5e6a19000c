// Classic single-file checkpoints (Delta's V1 spec): _delta_log/<version>.checkpoint.parquet
// holding one row per action of the table state at that version (protocol, metaData, txn,
// live add files, unexpired remove tombstones; never commitInfo), in the columns Spark and
// delta-rs read: txn, add, remove, metaData, protocol, each a struct with the protocol's field
// names, maps as map<string,string>, add.stats as the JSON string. Then _last_checkpoint
// points at it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_state.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

// The contents of _delta_log/_last_checkpoint.
struct LastCheckpoint {
  std::int64_t version = -1;
  std::int64_t size = 0;  // actions (rows) in the checkpoint
  std::optional<std::int64_t> size_in_bytes;
  std::optional<std::int64_t> num_of_add_files;
};

// nullopt when there is no _last_checkpoint; SourceError naming the file when it is not the
// JSON the protocol describes.
std::optional<LastCheckpoint> ReadLastCheckpoint(storage::FileSystem& fs, const std::string& table_root);

// Writes the checkpoint of `snapshot` (replacing one a racing writer made of the same
// version, which holds the same state), then _last_checkpoint unless that already names a
// newer checkpoint. Tombstones older than delta.deletedFileRetentionDuration (default one
// week) are left out.
LastCheckpoint WriteCheckpoint(storage::FileSystem& fs, const std::string& table_root,
                               const TableState& snapshot);

// The actions of the checkpoint of `version`. When `expected` (from _last_checkpoint) is
// given, its size, sizeInBytes and numOfAddFiles must match the file. Throws SourceError
// naming the file when it is missing, not Parquet, a V2 (sidecar) checkpoint, or does not
// match.
std::vector<Action> ReadCheckpoint(storage::FileSystem& fs, const std::string& table_root,
                                   std::int64_t version, const LastCheckpoint* expected);

// How long removed files stay as tombstones: delta.deletedFileRetentionDuration ("interval
// 7 days", ...) in milliseconds, one week when unset or unreadable.
std::int64_t TombstoneRetentionMs(const StringMap& configuration);

}  // namespace mssql_cdc::delta
