// Whether a stream has passed a capture-instance switch, from its facts rows: it has when a
// batch wrote the `capture_instance_switched` row for the newer instance and a later
// micro-batch followed (the DBA procedure's rule for when the older instance may be disabled,
// docs/schema-changes.md). Status and `mssql-cdc switches` both ask this.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mssql_cdc {

struct SwitchProgress {
  std::string from_instance, to_instance;
  std::string at_lsn;              // the newer instance's start LSN
  std::int64_t batch_id = 0;       // the batch that wrote the event
  std::optional<std::int64_t> latest_batch;  // the stream's newest micro-batch
  bool passed() const { return latest_batch && *latest_batch > batch_id; }
};

// The switches of stream `app_id` in `facts` (facts rows, any streams), oldest first.
std::vector<SwitchProgress> SwitchesOf(const arrow::Table& facts, const std::string& app_id);

}  // namespace mssql_cdc
