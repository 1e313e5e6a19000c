// The clock of a SQL Server: converts the local times it records (cdc.lsn_time_mapping's
// tran_end_time, create dates) to UTC instants and back.
//
// A SourceClock is a Windows time-zone name (what CURRENT_TIMEZONE_ID() and the
// `sourceTimeZone` option give), mapped to its IANA zone through CLDR's windowsZones table and
// converted with the system's tz database, or a fixed offset (servers older than 2022, where
// only the current offset is known). Local times that fall in a spring-forward gap or a
// fall-back overlap convert with the offset in force before the transition, as SQL Server's
// AT TIME ZONE does. Commit times in the repeated hour after a fall-back are put in order by
// CommitTimeConverter.
//
// SourceClock is immutable and cheap to copy; safe to share between threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"

namespace mssql_cdc {

class ZoneRules;  // transitions of one zone, defined in timezone.cc

class SourceClock {
 public:
  static SourceClock Utc();
  // A Windows zone name ("E. South America Standard Time", "UTC", any case). Throws
  // ConfigError naming the value when the name is unknown, with how to list valid names.
  static SourceClock ForWindowsZone(std::string_view windows_name);
  // A fixed offset in minutes east of UTC (-840 to 840).
  static SourceClock FixedOffset(int minutes_east);

  // "UTC", the Windows name as known ("Pacific Standard Time"), or "UTC-03:00" for an offset.
  const std::string& name() const { return name_; }
  bool is_utc() const;

  UtcMicros ToUtc(LocalMicros local) const;
  LocalMicros ToLocal(UtcMicros utc) const;
  // Offset in minutes east of UTC in force at `utc` (historic local mean time offsets that
  // are not whole minutes are rounded to the nearest minute).
  int OffsetMinutesAt(UtcMicros utc) const;
  // When `local` lies in the hour repeated after a fall-back, the instant of its second
  // reading (with the offset in force after the transition); otherwise nullopt.
  std::optional<UtcMicros> SecondReading(LocalMicros local) const;

  // Every Windows zone name this build knows, sorted.
  static std::vector<std::string> KnownWindowsZones();

 private:
  SourceClock(std::string name, std::shared_ptr<const ZoneRules> rules, int fixed_minutes);
  std::string name_;
  std::shared_ptr<const ZoneRules> rules_;  // null for a fixed offset
  int fixed_minutes_ = 0;
};

// Converts commit times read in LSN order. After a fall-back, the repeated local hour is read
// twice: a commit whose local time is more than a minute before its predecessor's, inside the
// overlap, starts the second pass, and it and the commits after it in that overlap take the
// offset in force after the transition. So UTC commit times follow commit order.
// It only knows what it has been fed: start it on a commit before the overlap (the reference
// looks back 3 hours), or a commit in the repeated hour converts as its first reading.
class CommitTimeConverter {
 public:
  explicit CommitTimeConverter(SourceClock clock);
  // Call with each commit's local time in LSN order (equal times may repeat).
  UtcMicros Next(LocalMicros local);

 private:
  SourceClock clock_;
  bool has_previous_ = false;
  LocalMicros previous_local_{};
  UtcMicros previous_utc_{};
  bool second_pass_ = false;
};

// How far a commit in the hour repeated after a fall-back looks back, in LSN order, for the
// commit whose local time went back (as mssql-cdc-pyspark 0.8.0's T-SQL looks back).
inline constexpr std::int64_t kRepeatedHourLookBack = 3 * kMicrosPerHour;

// The instant of one commit at `local`, as a read of the commits in LSN order reads it: its only
// reading, or in a repeated hour the reading CommitTimeConverter gives once fed `window(from)`:
// the local times, in LSN order, of the entries after the last one at or before `from` (local -
// kRepeatedHourLookBack) up to and including this commit. `window` is asked only in that hour.
UtcMicros CommitInstant(const SourceClock& clock, LocalMicros local,
                        const std::function<std::vector<LocalMicros>(LocalMicros from)>& window);

}  // namespace mssql_cdc
