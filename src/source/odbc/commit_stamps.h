// The _commit_ts of change rows read in LSN order: each commit's local tran_end_time turned
// into UTC once, when the first row of that commit arrives, by one CommitTimeConverter.
//
// A read starting inside the hour repeated after a fall-back cannot tell which reading its
// first commit is from that commit alone; the local time of the commit before the range
// (commit_before) settles it. Progress is saved after each delivered batch and restored before
// a retry, so rows read again are stamped as they were the first time.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

#include "core/lsn.h"
#include "core/timezone.h"

namespace mssql_cdc::odbc {

class CommitStamps {
 public:
  explicit CommitStamps(const SourceClock& clock) : clock_(clock), progress_{CommitTimeConverter(clock)} {}

  // Whether a read of the range starting at `from` needs the commit before it: only a zone
  // with transitions has a repeated hour.
  bool NeedsCommitBefore(const Lsn& from) const { return !clock_.is_utc() && !from.IsZero(); }
  void set_commit_before(std::optional<LocalMicros> local) { commit_before_ = local; }

  // Whether `lsn` (10 bytes) starts a commit the previous row was not part of; its time must
  // then go to Start.
  bool IsNewCommit(const std::uint8_t* lsn) const {
    return !progress_.has_commit || std::memcmp(lsn, progress_.commit_lsn, Lsn::kSize) != 0;
  }
  // Starts the commit `lsn` with local time `local`; returns its UTC microseconds.
  std::int64_t Start(const std::uint8_t* lsn, LocalMicros local);
  // The UTC microseconds of the current commit.
  std::int64_t current() const { return progress_.commit_ts; }

  void Save() { saved_ = progress_; }
  void Restore() { progress_ = saved_ ? *saved_ : Progress{CommitTimeConverter(clock_)}; }

 private:
  struct Progress {
    CommitTimeConverter converter;
    bool has_commit = false;
    std::uint8_t commit_lsn[Lsn::kSize] = {};
    std::int64_t commit_ts = 0;
    bool fed_any = false;
  };

  SourceClock clock_;
  std::optional<LocalMicros> commit_before_;
  Progress progress_;
  std::optional<Progress> saved_;
};

}  // namespace mssql_cdc::odbc
