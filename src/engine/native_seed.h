// `mssql-cdc seed`: a copy of the table already in the lake, a Delta table or Parquet files on
// disk, written into a stream's bronze table as its snapshot (docs/snapshots.md), so that
// the stream's bootstrap finds it and reads nothing from SQL Server. The rules are the seed's
// (snapshot/seed.h), as in Spark mode; the copy is read a row group at a time and written into
// one bronze commit, its memory bounded by a row group, never by the copy.
#pragma once

#include <cstdint>
#include <string>

#include "core/offset.h"
#include "engine/stream.h"
#include "snapshot/seed.h"
#include "source/open_source.h"

namespace mssql_cdc {

enum class SeedCopyFormat { kDelta, kParquet };

struct NativeSeedRequest {
  StreamConfig stream;  // the table's stream: its source, bronze target, app_id, facts table
  std::string copy;     // a Delta table's directory, or a Parquet file or directory of them
  SeedCopyFormat format = SeedCopyFormat::kDelta;
  SeedAsOf as_of;
  bool allow_missing_columns = false;
  bool reseed = false;
};

struct NativeSeedResult {
  Offset offset;
  std::int64_t rows = 0;
  bool written = false;  // false: bronze held this seed already
};

// Every refusal (the copy missing or without the key, the as_of, another snapshot in bronze)
// comes before anything is written. With a facts table, writes the stream's `bootstrap` row.
NativeSeedResult SeedNatively(const NativeSeedRequest& request, SourceFactory factory = nullptr);

}  // namespace mssql_cdc
