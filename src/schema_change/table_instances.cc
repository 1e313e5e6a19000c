#include "schema_change/table_instances.h"

#include <algorithm>
#include <tuple>

#include "core/ascii.h"
#include "core/errors.h"

namespace mssql_cdc {

TableInstances TableInstances::Of(const std::vector<CaptureInstanceInfo>& listed,
                                  const CaptureInstanceInfo& of) {
  TableInstances out;
  out.schema_ = of.source_schema;
  out.table_ = of.source_table;
  for (const auto& instance : listed) {
    if (!EqualsIgnoringAsciiCase(instance.source_schema, of.source_schema) ||
        !EqualsIgnoringAsciiCase(instance.source_table, of.source_table)) {
      continue;
    }
    (instance.start_lsn.IsZero() ? out.pending_ : out.active_).push_back(instance);
  }
  auto older = [](const CaptureInstanceInfo& a, const CaptureInstanceInfo& b) {
    return std::tie(a.start_lsn, a.create_date.value, a.name) <
           std::tie(b.start_lsn, b.create_date.value, b.name);
  };
  std::sort(out.active_.begin(), out.active_.end(), older);
  std::sort(out.pending_.begin(), out.pending_.end(), older);
  return out;
}

TableInstances TableInstances::Of(Source& source, const CaptureInstanceInfo& of) {
  return Of(source.ListTableInstances(of.source_schema, of.source_table), of);
}

std::vector<CaptureInstanceInfo> TableInstances::all() const {
  std::vector<CaptureInstanceInfo> out = active_;
  out.insert(out.end(), pending_.begin(), pending_.end());
  return out;
}

const CaptureInstanceInfo& TableInstances::At(const Lsn& lsn) const {
  if (active_.empty()) {
    throw InternalError("no capture instance of " + table() + " has taken over yet");
  }
  const CaptureInstanceInfo* found = &active_.front();
  for (const auto& instance : active_) {
    if (instance.start_lsn <= lsn) found = &instance;
  }
  return *found;
}

std::string TableInstances::NameAt(const Lsn& lsn, const std::string& otherwise) const {
  return active_.empty() ? otherwise : At(lsn).name;
}

CaptureInstanceInfo SnapshotInstance(const TableInstances& instances, const CaptureInstanceInfo& of) {
  return instances.active().empty() ? of : instances.active().back();
}

std::vector<InstanceSegment> TableInstances::Segments(const Lsn& from, const Lsn& to) const {
  std::vector<InstanceSegment> out;
  if (to < from) return out;
  Lsn at = from;
  while (true) {
    const CaptureInstanceInfo& instance = At(at);
    // The next instance taking over after `at`, if it does so inside the range.
    std::optional<Lsn> next;
    for (const auto& later : active_) {
      if (later.start_lsn > at && later.start_lsn <= to) {
        next = later.start_lsn;
        break;
      }
    }
    if (!next) {
      out.push_back({instance.name, at, to});
      return out;
    }
    out.push_back({instance.name, at, next->Decrement()});
    at = *next;
  }
}

std::vector<InstanceSwitch> TableInstances::SwitchesIn(const Lsn& after, const Lsn& through) const {
  std::vector<InstanceSwitch> out;
  for (std::size_t i = 1; i < active_.size(); ++i) {
    const Lsn& s = active_[i].start_lsn;
    if (s > after && s <= through) out.push_back({active_[i - 1].name, active_[i]});
  }
  return out;
}

void CheckNotDisabledTooEarly(const TableInstances& instances, const std::string& configured,
                              const Offset& last_processed) {
  const auto all = instances.all();
  const bool gone = std::none_of(all.begin(), all.end(), [&](const CaptureInstanceInfo& i) {
    return EqualsIgnoringAsciiCase(i.name, configured);
  });
  if (!gone || instances.active().empty()) return;
  const CaptureInstanceInfo& successor = instances.active().front();
  if (last_processed.lsn.Increment() >= successor.start_lsn) return;
  throw DataLossError(
      "capture instance '" + configured + "' was disabled before the stream read up to LSN " +
      successor.start_lsn.ToString() + ", where '" + successor.name +
      "' takes over: the changes after LSN " + last_processed.lsn.ToString() +
      " and before it are gone with it. Disable an old capture instance only after every stream "
      "wrote a capture_instance_switched facts row and one more batch; to go on, take a new "
      "snapshot (on_data_loss=resnapshot) or start a new checkpoint");
}

}  // namespace mssql_cdc
