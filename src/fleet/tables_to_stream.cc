#include "fleet/tables_to_stream.h"

#include <algorithm>
#include <map>

#include "core/ascii.h"
#include "core/options.h"

namespace mssql_cdc {

std::vector<ListedInstance> JudgeInstances(const std::vector<CaptureInstanceInfo>& instances) {
  std::vector<const CaptureInstanceInfo*> ordered;
  for (const auto& instance : instances) ordered.push_back(&instance);
  auto table_of = [](const CaptureInstanceInfo& i) { return i.source_schema + "." + i.source_table; };
  std::sort(ordered.begin(), ordered.end(), [&](const CaptureInstanceInfo* a, const CaptureInstanceInfo* b) {
    const auto ta = AsciiLower(table_of(*a)), tb = AsciiLower(table_of(*b));
    if (ta != tb) return ta < tb;
    if (a->create_date.value != b->create_date.value) return a->create_date.value < b->create_date.value;
    return a->name < b->name;
  });
  std::vector<ListedInstance> out;
  std::map<std::string, std::string> streamed_of_table;  // lower-case table -> its streamed instance
  for (const CaptureInstanceInfo* instance : ordered) {
    ListedInstance listed{instance->name, table_of(*instance)};
    const std::string table_key = AsciiLower(listed.table);
    if (EqualsIgnoringAsciiCase(instance->name, kHeartbeatCaptureInstance)) {
      listed.why_not = "the heartbeat (sql/heartbeat.sql): it only moves the max LSN";
    } else if (const auto first = streamed_of_table.find(table_key); first != streamed_of_table.end()) {
      listed.why_not = "a newer instance of " + listed.table + ": the stream of " + first->second +
                       " moves to it at the switch";
    } else {
      listed.stream = true;
      streamed_of_table.emplace(table_key, instance->name);
    }
    out.push_back(std::move(listed));
  }
  return out;
}

}  // namespace mssql_cdc
