// The completeness verdict (docs/spark.md): finalized_until = truncate(end commit
// time, granularity) in the control table, one row per table name, moved forward only.
// Data first, verdict after: callers advance only after the batch's data is committed, so a
// crash makes the verdict lag, never lead.
#pragma once

#include <arrow/type_fwd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/group_commit.h"
#include "core/offset.h"
#include "core/time.h"

namespace mssql_cdc {

namespace delta {
class DeltaTable;
}

enum class Granularity { kMinute, kHour, kDay };

// "minute", "hour", "day"; ConfigError otherwise.
Granularity ParseGranularity(std::string_view text);
UtcMicros Truncate(UtcMicros time, Granularity granularity);

struct Verdict {
  std::string table_name;
  UtcMicros finalized_until;
  std::string end_lsn;
  UtcMicros end_commit_ts;
  UtcMicros updated_at;
};

// Creates the control table at `control_uri` when missing.
void EnsureControlTable(const std::string& control_uri);

// Moves the verdict of `table_name` to truncate(end.commit_ts) when that is later than the
// stored one (or none is stored). Returns true when it moved. An end offset without a commit
// time moves nothing. Retries commits lost to concurrent writers (see ConflictRetry).
bool Advance(const std::string& control_uri, const std::string& table_name, const Offset& end,
             Granularity granularity = Granularity::kHour);

// Several tables' verdicts moved in one commit of the control table, each by Advance's rule
// (a name given twice moves to the later end). Returns how many moved.
struct VerdictMove {
  std::string table_name;
  Offset end;
};
int AdvanceMany(const std::string& control_uri, const std::vector<VerdictMove>& moves,
                Granularity granularity = Granularity::kHour);

// The verdict moves of many streams into one control table, made a few commits at a time:
// each Advance waits until its move is in a commit, which holds the moves of every stream that
// asked while the one before was written (core/group_commit.h). Thread-safe.
class VerdictWriter {
 public:
  VerdictWriter(std::string control_uri, Granularity granularity);
  ~VerdictWriter();
  // As Advance(control_uri, table_name, end, granularity).
  void Advance(const std::string& table_name, const Offset& end);
  const std::string& control_uri() const { return control_uri_; }

 private:
  void Write(const std::vector<VerdictMove>& moves);

  std::string control_uri_;
  Granularity granularity_;
  std::unique_ptr<delta::DeltaTable> table_;  // opened by the first write; used by one writer at a time
  GroupCommit<VerdictMove> group_;
};

std::optional<Verdict> ReadVerdict(const std::string& control_uri, const std::string& table_name);
// The verdict among `rows`, one name's stored control rows (of a control table named in Spark's
// catalog, read through the session): the rule ReadVerdict applies at a path.
std::optional<Verdict> VerdictAmong(const std::shared_ptr<arrow::Table>& rows,
                                    const std::string& table_name);
// Every table's verdict in the control table, by table name, from one read of it.
std::map<std::string, Verdict> ReadVerdicts(const std::string& control_uri);

// Whether every period ending at or before `period_end` is complete: finalized_until >=
// period_end.
bool IsFinal(const std::string& control_uri, const std::string& table_name, UtcMicros period_end);
// The same rule on a verdict read elsewhere (a control table named in Spark's catalog).
bool VerdictCovers(const std::optional<UtcMicros>& finalized_until, UtcMicros period_end);

// How a verdict write that lost to a concurrent commit is retried: after a jittered delay that
// doubles from 50 ms up to 2 s. It gives up after a minute in which the table did not move
// (no other writer's commit was seen: something other than contention is wrong), or after ten
// minutes in all. Losing to writers that do commit is contention, which a slow machine
// stretches past a minute without anything being wrong. One object per write.
class ConflictRetry {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit ConflictRetry(Clock now = std::chrono::steady_clock::now);
  // Reports the table version the write found on its last try; a version newer than the
  // last reported one means another writer committed, and the quiet minute starts again.
  void SawTableVersion(std::int64_t version);
  // The delay before the next try; nullopt once it is time to give up.
  std::optional<std::chrono::milliseconds> NextDelay();
  // Whether it is time to give up.
  bool Expired() const;

 private:
  Clock now_;
  std::chrono::steady_clock::time_point quiet_deadline_;
  std::chrono::steady_clock::time_point final_deadline_;
  std::int64_t version_seen_ = -1;
  int attempt_ = 0;
};

// Silver's row of the control table (docs/reference/tables.md): how far apply_changes has
// kept a silver table, under the silver table's name.
struct SilverPosition {
  std::optional<std::string> applied_lsn;        // highest bronze LSN applied
  std::optional<std::string> snapshot_lsn;       // the snapshot silver was last rebuilt from
  std::optional<std::string> open_snapshot_lsn;  // an open chunked snapshot applied wave by wave
  std::optional<std::int32_t> snapshot_wave;     // its last wave applied
};

// nullopt when the control table has no position for `table_name`.
std::optional<SilverPosition> ReadSilverPosition(const std::string& control_uri,
                                                 const std::string& table_name);
// Silver's position among `rows`, one name's stored control rows read elsewhere: the rule
// ReadSilverPosition applies at a path.
std::optional<SilverPosition> SilverPositionAmong(const std::shared_ptr<arrow::Table>& rows);

// Sets silver's position, and its verdict to `verdict` when that is later than the stored one
// (never backwards), in one commit; other names' rows are kept as a concurrent commit left
// them. Compare and set: when the stored position is no longer `expected` (another
// apply_changes of the same silver table moved it), nothing is written and
// ConcurrentModificationError says so.
void WriteSilverPosition(const std::string& control_uri, const std::string& table_name,
                         const std::optional<SilverPosition>& expected, const SilverPosition& position,
                         const std::optional<Verdict>& verdict);

// The ConcurrentModificationError of a silver position another apply_changes moved (both modes).
[[noreturn]] void ThrowSilverPositionMoved(const std::string& control, const std::string& silver_name);

}  // namespace mssql_cdc
