// A seed (docs/snapshots.md): a copy of the table already in the lake stands for its
// snapshot, for tables too big to snapshot within CDC retention. This holds the two rules both
// modes share: where the copy stands in the change history, and how its columns become the
// stream's.
//
// Where it stands: `as_of` says when the copy started being read, as a UTC time or as an LSN
// recorded before that. A time maps to the last commit at or before it on the server's clock
// (sys.fn_cdc_map_time_to_lsn), to the second, earlier rather than later: in the first
// reading of an hour a fall-back repeats, an hour earlier, since commits of the second
// reading carry the same local times. The stream replays every change after that commit, so
// those changes must still be in CDC.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <arrow/type_fwd.h>

#include "core/lsn.h"
#include "core/offset.h"
#include "core/time.h"
#include "snapshot/snapshot_finder.h"
#include "source/source.h"
#include "source/source_clock.h"

namespace mssql_cdc {

// One of the two.
struct SeedAsOf {
  std::optional<UtcMicros> time;
  std::optional<Lsn> lsn;
};

// The seed's offset: its LSN and that LSN's commit time (UTC). Throws ConfigError when the
// time is in the future or the LSN above the max LSN; DataLossError when no commit is as old
// as the time, or when CDC no longer holds the changes right after the LSN (cleanup passed it,
// or the capture instance began after it).
Offset ResolveSeedPoint(Source& source, const SourceClock& clock,
                        const CaptureInstanceInfo& instance, const SeedAsOf& as_of,
                        UtcMicros now = NowUtc());

// Whether a seed at `seed` writes, given the snapshot the target holds already (`found`):
// kExisting when it is this seed (a rerun) and nothing is written; kWrite when there is none,
// or `reseed` replaces an older one. Throws ConfigError when the target holds another
// snapshot (without reseed, or not older than the seed), or a chunked one.
enum class SeedAction { kWrite, kExisting };
SeedAction DecideSeed(const std::optional<FoundSnapshot>& found, const Lsn& seed, bool reseed);

// How a copy's columns become the stream's captured columns: per captured column (in
// `captured` order), the copy's column of that name ignoring case, or nullopt for one the copy
// lacks. The copy's other columns are dropped.
struct SeedColumns {
  std::vector<std::optional<std::string>> from;
};

// Throws ConfigError, before anything is read, when the copy lacks a key column, or lacks
// another captured column and `allow_missing_columns` is false (those then read NULL), or
// when two of its columns differ only in case.
SeedColumns MatchSeedColumns(const std::vector<CapturedColumn>& captured,
                             const std::vector<std::string>& key_columns,
                             const std::vector<std::string>& copy_columns,
                             bool allow_missing_columns);

// What a seed's rows hold besides the copy's columns, by bronze column: each is an operation-0
// row of the seed's capture instance stamped with its LSN (_start_lsn and _snapshot) and that
// LSN's commit time (_commit_ts, absent when unknown). Every metadata column not named
// (_seqval, _command_id, _batch_id, _chunk, and _commit_ts when absent) is NULL.
using SeedValue = std::variant<std::string, std::int32_t, UtcMicros>;
std::map<std::string, SeedValue> SeedMetadata(const std::string& capture_instance, const Offset& offset);

// The userMetadata of the bronze commit that writes a seed.
std::string SeedCommitMetadata(const std::string& capture_instance, const Offset& offset);

}  // namespace mssql_cdc
