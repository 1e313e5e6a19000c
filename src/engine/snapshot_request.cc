#include "engine/snapshot_request.h"

#include "schema_change/table_instances.h"
#include "snapshot/snapshot_finder.h"

namespace mssql_cdc {

SnapshotSubject SnapshotSubjectFor(Source& source, const CaptureInstanceInfo& configured,
                                   const std::string& app_id, const std::string& target,
                                   const std::optional<std::vector<std::string>>& snapshot_keys) {
  SnapshotSubject subject;
  subject.instance = SnapshotInstance(TableInstances::Of(source, configured), configured);
  subject.instances = InstancesOfTable(source.ListCaptureInstances(), configured);
  subject.columns = source.CapturedColumns(subject.instance.name);
  subject.key_columns = snapshot_keys.value_or(std::vector<std::string>{});
  subject.app_id = app_id;
  subject.target = target;
  return subject;
}

}  // namespace mssql_cdc
