#include "snapshot/snapshot_finder.h"

#include <arrow/api.h>

#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "delta/column_mapping.h"

namespace mssql_cdc {
namespace {

// False when the file's statistics show no operation-0 row; true when they cannot tell.
// `operation` is the _operation column's name in statistics (its physical name).
bool MayHoldSnapshotRows(const delta::AddFile& file, const std::string& operation) {
  if (!file.stats) return true;
  const auto stats = nlohmann::json::parse(*file.stats, nullptr, /*allow_exceptions=*/false);
  if (stats.is_discarded()) return true;
  const auto min = stats.find("minValues");
  if (min == stats.end() || !min->contains(operation)) return true;
  return (*min)[operation].is_number() && (*min)[operation].get<std::int64_t>() == 0;
}

// False when the file's statistics show that none of its rows belongs to a snapshot newer
// than `newer_than` (coalesce(_snapshot, _start_lsn) is at most the larger of their maxima).
bool MayHoldNewerSnapshot(const delta::AddFile& file, const std::string& snapshot_column,
                          const std::string& start_column, const std::string& newer_than) {
  if (!file.stats) return true;
  const auto stats = nlohmann::json::parse(*file.stats, nullptr, /*allow_exceptions=*/false);
  if (stats.is_discarded()) return true;
  const auto max = stats.find("maxValues");
  if (max == stats.end() || !max->contains(start_column) || !(*max)[start_column].is_string()) return true;
  if ((*max)[start_column].get<std::string>() > newer_than) return true;
  return max->contains(snapshot_column) && (*max)[snapshot_column].is_string() &&
         (*max)[snapshot_column].get<std::string>() > newer_than;
}

bool Named(std::string_view name, const std::vector<std::string>& instances) {
  for (const auto& instance : instances) {
    if (EqualsIgnoringAsciiCase(name, instance)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> InstancesOfTable(const std::vector<CaptureInstanceInfo>& listed,
                                          const CaptureInstanceInfo& instance) {
  std::vector<std::string> names{instance.name};
  for (const auto& other : listed) {
    if (other.name != instance.name &&
        EqualsIgnoringAsciiCase(other.source_schema, instance.source_schema) &&
        EqualsIgnoringAsciiCase(other.source_table, instance.source_table)) {
      names.push_back(other.name);
    }
  }
  return names;
}

std::optional<FoundSnapshot> FindSnapshot(const delta::DeltaTable& bronze,
                                          const std::vector<std::string>& instances,
                                          const std::optional<std::string>& newer_than) {
  const auto schema_ptr = bronze.state().schema();
  const auto& schema = *schema_ptr;
  std::vector<std::string> columns{"_operation", "_capture_instance", "_start_lsn", "_commit_ts"};
  const bool has_snapshot = schema.GetFieldIndex("_snapshot") >= 0;
  const bool has_chunk = schema.GetFieldIndex("_chunk") >= 0;
  if (has_snapshot) columns.push_back("_snapshot");
  if (has_chunk) columns.push_back("_chunk");
  const auto operation_field = schema.GetFieldByName("_operation");
  const std::string operation = operation_field ? delta::PhysicalName(*operation_field) : "_operation";
  std::vector<delta::AddFile> files;
  auto physical = [&](const char* name) {
    const auto field = schema.GetFieldByName(name);
    return field ? delta::PhysicalName(*field) : std::string(name);
  };
  const std::string snapshot_column = physical("_snapshot"), start_column = physical("_start_lsn");
  for (const auto& [path, add] : bronze.state().files) {
    if (!MayHoldSnapshotRows(add, operation)) continue;
    if (newer_than && !MayHoldNewerSnapshot(add, snapshot_column, start_column, *newer_than)) continue;
    files.push_back(add);
  }
  std::optional<FoundSnapshot> found;
  std::string found_lsn;
  bronze.ScanFiles(files, columns, [&](const arrow::RecordBatch& batch) {
    const auto& op = static_cast<const arrow::Int32Array&>(*batch.column(0));
    const auto& ci = static_cast<const arrow::StringArray&>(*batch.column(1));
    const auto& start = static_cast<const arrow::StringArray&>(*batch.column(2));
    const auto& commit = static_cast<const arrow::TimestampArray&>(*batch.column(3));
    const auto* stamp =
        has_snapshot ? &static_cast<const arrow::StringArray&>(*batch.column(4)) : nullptr;
    const auto* chunk = has_chunk ? static_cast<const arrow::Int32Array*>(
                                        batch.column(has_snapshot ? 5 : 4).get())
                                  : nullptr;
    // Rows of one file name one capture instance over and over: its verdict is kept.
    std::optional<std::string_view> last_instance;
    bool last_named = false;
    for (std::int64_t i = 0; i < batch.num_rows(); ++i) {
      if (op.IsNull(i) || op.Value(i) != 0 || ci.IsNull(i)) continue;
      const std::string_view instance = ci.GetView(i);
      if (instance != last_instance) {
        last_instance = instance;
        last_named = Named(instance, instances);
      }
      if (!last_named) continue;
      const std::string_view lsn =
          stamp && !stamp->IsNull(i) ? stamp->GetView(i) : start.GetView(i);
      if (found && lsn <= found_lsn) continue;
      if (newer_than && lsn <= *newer_than) continue;
      found_lsn = std::string(lsn);
      FoundSnapshot f;
      f.offset.lsn = Lsn::Parse(found_lsn);
      // A chunk row's commit time is its wave's; a whole snapshot's is the stamp's own.
      const bool chunked = chunk && !chunk->IsNull(i);
      if (!chunked && !commit.IsNull(i)) f.offset.commit_ts = UtcMicros{commit.Value(i)};
      f.chunked = chunked;
      found = f;
    }
  });
  return found;
}

}  // namespace mssql_cdc
