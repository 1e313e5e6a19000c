// The capture instances of one source table, and which of them a stream reads each LSN from
// (docs/schema-changes.md, docs/decisions/0014-a-stream-reads-a-table-across-capture-instances.md).
//
// A newer instance takes over at its start LSN S: changes below S are read from the older
// instance, changes from S on from the newer, so a range that crosses S is read in two pieces
// and every commit once. An instance whose enable the capture process has not reached yet
// (start LSN zero) takes over nothing; a batch must not read past the commits before its
// enable (FirstCommitNotBefore), or it would read from the older instance changes the newer
// one will hold with its new columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/lsn.h"
#include "core/offset.h"
#include "source/source.h"

namespace mssql_cdc {

// A piece of a read range served by one instance: rows with __$start_lsn in [from, to].
struct InstanceSegment {
  std::string capture_instance;
  Lsn from;
  Lsn to;
};

// A newer instance taking over inside a batch's range.
struct InstanceSwitch {
  std::string from_instance;
  CaptureInstanceInfo to;  // to.start_lsn is S
};

class TableInstances {
 public:
  // The instances of `of`'s table among `listed` (sys.sp_cdc_help_change_data_capture rows).
  static TableInstances Of(const std::vector<CaptureInstanceInfo>& listed,
                           const CaptureInstanceInfo& of);
  // The same, listed by `source` for `of`'s table alone (Source::ListTableInstances).
  static TableInstances Of(Source& source, const CaptureInstanceInfo& of);

  // Instances that have taken over, oldest first (by start LSN); never empty once built from
  // a list holding `of`, unless every instance is pending.
  const std::vector<CaptureInstanceInfo>& active() const { return active_; }
  // Instances whose enable the capture process has not reached (start LSN zero).
  const std::vector<CaptureInstanceInfo>& pending() const { return pending_; }
  // Every instance, oldest first, pending ones last.
  std::vector<CaptureInstanceInfo> all() const;
  std::string table() const { return schema_ + "." + table_; }

  // The instance changes at `lsn` are read from: the newest active one whose start LSN is at
  // or below it, else the oldest. Throws InternalError when none is active.
  const CaptureInstanceInfo& At(const Lsn& lsn) const;
  // At(lsn)'s name, or `otherwise` while no instance has taken over.
  std::string NameAt(const Lsn& lsn, const std::string& otherwise) const;
  // [from, to] cut at each newer instance's start LSN.
  std::vector<InstanceSegment> Segments(const Lsn& from, const Lsn& to) const;
  // The instances taking over in (after, through]: a batch that starts after `after` and ends
  // at `through` crosses them.
  std::vector<InstanceSwitch> SwitchesIn(const Lsn& after, const Lsn& through) const;

 private:
  std::string schema_, table_;
  std::vector<CaptureInstanceInfo> active_;
  std::vector<CaptureInstanceInfo> pending_;
};

// The instance a whole snapshot of the table reads through: the newest that has taken over,
// whose captured columns are the table's current ones (an older instance reads NULL for a
// column added since); `of` itself when none has.
CaptureInstanceInfo SnapshotInstance(const TableInstances& instances, const CaptureInstanceInfo& of);

// Throws DataLossError naming the cause when the instance a stream was configured with
// (`configured`, matched ignoring case) is no longer listed and the changes after
// `last_processed` begin below the oldest remaining instance's start: disabled before the
// stream passed the switch, they went with it. Meant for a range retention found purged.
void CheckNotDisabledTooEarly(const TableInstances& instances, const std::string& configured,
                              const Offset& last_processed);

}  // namespace mssql_cdc
