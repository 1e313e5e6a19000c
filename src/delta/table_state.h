// The state of a Delta table at one version: its protocol, metadata, active files, the txn
// versions of its writers and the tombstones VACUUM waits on. log_replay.h reads it from the
// log; log_files.h applies a commit to it. ("TableState", not "snapshot": a snapshot in this
// project is a copy of a source table, src/snapshot/.)
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "delta/actions.h"

namespace mssql_cdc::delta {

struct TableState {
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

}  // namespace mssql_cdc::delta
