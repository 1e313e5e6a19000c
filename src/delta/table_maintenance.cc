// DeltaTable's maintenance: compaction and vacuum (table.h). Both only ever act on what the
// log says: compaction commits through RewriteFiles, which keeps it through races with appends
// and plans it again when a winner removed one of its files;
// vacuum deletes nothing the current snapshot names, and nothing younger than the retention.
#include <arrow/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "core/errors.h"
#include "delta/data_file_io.h"
#include "storage/file_system.h"
#include "delta/table.h"

namespace mssql_cdc::delta {
namespace {

std::int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool IsTempFile(const std::string& name) {
  return name.size() > 5 && name.front() == '.' && name.compare(name.size() - 4, 4, ".tmp") == 0;
}

bool IsDataFile(const std::string& name) {
  return name.size() > 8 && name.compare(name.size() - 8, 8, ".parquet") == 0;
}

// The groups compaction rewrites: small files, oldest first, packed up to the target size.
std::vector<std::vector<AddFile>> CompactionGroups(const TableState& snapshot, std::int64_t target_file_bytes) {
  std::vector<AddFile> small;
  for (const auto& [path, add] : snapshot.files) {
    if (add.size < target_file_bytes / 4 * 3) small.push_back(add);
  }
  std::sort(small.begin(), small.end(), [](const AddFile& a, const AddFile& b) {
    return std::tie(a.modification_time, a.path) < std::tie(b.modification_time, b.path);
  });
  std::vector<std::vector<AddFile>> groups(1);
  std::int64_t bytes = 0;
  for (const auto& add : small) {
    if (!groups.back().empty() && bytes + add.size > target_file_bytes) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(add);
    bytes += add.size;
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g.size() < 2; }),
               groups.end());
  return groups;
}

}  // namespace

CommitResult DeltaTable::Compact(std::int64_t target_file_bytes) {
  if (target_file_bytes < 1) throw ConfigError("the target file size must be at least one byte");
  AppendOptions options;
  options.operation = "OPTIMIZE";
  options.merge_schema = false;
  // Each group becomes one file: its rows are at most the target size on disk already.
  options.write.target_file_bytes = std::max<std::int64_t>(target_file_bytes, 1) * 2;
  CatchUp();
  return RewriteFiles(state_.schema(), [&](const TableState& snapshot, const std::shared_ptr<arrow::Schema>& schema) {
    Rewrite rewrite;
    rewrite.data_change = false;
    rewrite.predicate = "compaction";
    const auto groups = CompactionGroups(snapshot, target_file_bytes);
    rewrite.commit = !groups.empty();
    for (const auto& group : groups) {
      rewrite.AddPart(*ReadFiles(group, schema));
      for (const auto& add : group) rewrite.remove.push_back(add);
    }
    return rewrite;
  }, options);
}

std::vector<std::string> DeltaTable::Vacuum(std::int64_t retention_ms, bool dry_run) {
  if (retention_ms < 0) throw ConfigError("a vacuum retention cannot be negative");
  CatchUp();
  const std::int64_t cutoff = NowMillis() - retention_ms;
  std::set<std::string> live, removed_recently;
  for (const auto& [path, add] : state_.files) live.insert(DataFileRelativePath(path));
  for (const auto& [path, remove] : state_.tombstones) {
    if (remove.deletion_timestamp.value_or(0) >= cutoff) removed_recently.insert(DataFileRelativePath(path));
  }
  std::vector<std::string> deleted;
  auto consider = [&](const std::string& directory, const std::string& prefix, bool data) {
    for (const storage::FileInfo& entry : fs_->List(directory)) {
      if (entry.is_directory) continue;
      const std::string relative = prefix + entry.name;
      bool old_enough = entry.modification_time_ms < cutoff;
      if (IsTempFile(entry.name)) {
        // A temporary file a killed writer left; a live writer's is younger than the retention.
      } else if (data && IsDataFile(entry.name)) {
        if (live.count(relative) > 0 || removed_recently.count(relative) > 0) continue;
      } else {
        continue;
      }
      if (!old_enough) continue;
      if (!dry_run) fs_->Delete(JoinPath(directory, entry.name));
      deleted.push_back(relative);
    }
  };
  consider(root_, "", true);
  consider(JoinPath(root_, "_delta_log"), "_delta_log/", false);
  // Deleting happened after the listing: a writer that committed a file meanwhile named a file
  // young enough to have been skipped, since retention_ms is longer than any of its batches.
  if (!deleted.empty()) {
    spdlog::info("Delta table {}: vacuum {} {} file(s) older than the retention", root_,
                 dry_run ? "would delete" : "deleted", deleted.size());
  }
  return deleted;
}

}  // namespace mssql_cdc::delta
