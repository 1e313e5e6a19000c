#include "maintenance/maintenance.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>

#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "delta/table.h"
#include "delta/table_cells.h"
#include "engine/table_schemas.h"
#include "snapshot/plans_table.h"

namespace mssql_cdc {

std::vector<std::string> PipelineTables(const ManyConfig& config, const std::vector<std::string>& only) {
  std::vector<std::string> tables;
  auto add = [&](const std::string& uri) {
    if (std::find(tables.begin(), tables.end(), uri) == tables.end() && delta::DeltaTable::Exists(uri)) {
      tables.push_back(uri);
    }
  };
  std::optional<std::string> facts;
  for (const auto& table : config.tables) {
    const StreamConfig stream = TableStreamConfig(config, table);
    facts = stream.params.facts_table;
    if (!only.empty() && std::find(only.begin(), only.end(), table.capture_instance) == only.end()) continue;
    add(stream.params.target);
    add(PlansTableFor(stream.params.target));
    if (config.silver) add(TableSilverOptions(config, stream).silver);
  }
  if (facts) add(*facts);
  if (config.control_table) add(*config.control_table);
  return tables;
}

std::vector<CompactionSummary> CompactTables(const std::vector<std::string>& tables, std::int64_t target_file_bytes) {
  std::vector<CompactionSummary> out;
  for (const auto& uri : tables) {
    auto table = delta::DeltaTable::Open(uri);
    const auto result = table.Compact(target_file_bytes);
    CompactionSummary summary{uri};
    if (result.written) {
      summary.version = result.version;
      summary.files_added = result.files;
      summary.files_removed = result.files_removed;
    }
    out.push_back(summary);
  }
  return out;
}

FactsAndTargets PipelineFactsAndTargets(const ManyConfig& config) {
  FactsAndTargets out;
  for (const auto& table : config.tables) {
    const StreamConfig stream = TableStreamConfig(config, table);
    out.facts = stream.params.facts_table;
    out.targets.push_back(stream.params.target);
  }
  return out;
}

std::int64_t LongestBatchMillis(const std::optional<std::string>& facts, const std::vector<std::string>& targets) {
  if (!facts || !delta::DeltaTable::Exists(*facts)) return 0;
  const auto rows = delta::DeltaTable::Open(*facts).Read();
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < rows->num_rows(); ++r) {
    const auto target = delta::TextCell(*rows, "target", r);
    if (!target || std::find(targets.begin(), targets.end(), *target) == targets.end()) continue;
    longest = std::max(longest, delta::IntCell(*rows, "duration_ms", r).value_or(0));
  }
  return longest;
}

void CheckVacuumRetention(std::int64_t retention_ms, std::int64_t longest_batch_ms) {
  if (retention_ms <= longest_batch_ms) {
    throw ConfigError("a vacuum retention of " + std::to_string(retention_ms / 1000) +
                      " s is not longer than the longest batch the facts table records (" +
                      std::to_string(longest_batch_ms / 1000) +
                      " s): files a batch writes before it commits would be deleted; give a longer retention "
                      "(the default is 168 hours)");
  }
}

std::vector<VacuumSummary> VacuumTables(const std::vector<std::string>& tables, std::int64_t retention_ms,
                                        bool dry_run) {
  std::vector<VacuumSummary> out;
  for (const auto& uri : tables) {
    auto table = delta::DeltaTable::Open(uri);
    out.push_back({uri, table.Vacuum(retention_ms, dry_run)});
  }
  return out;
}

std::int64_t DeleteOldBatchFacts(const std::string& facts, UtcMicros older_than, bool dry_run) {
  if (!delta::DeltaTable::Exists(facts)) return 0;
  CheckExistingTable(facts, TableKind::kFacts);
  delta::EnsureComputeKernels();
  auto table = delta::DeltaTable::Open(facts);
  std::int64_t deleted = 0;
  delta::AppendOptions options;
  options.operation = "DELETE";
  options.merge_schema = false;
  table.RewriteFiles(table.state().schema(), [&](const delta::TableState& snapshot,
                                                     const std::shared_ptr<arrow::Schema>& schema) {
    delta::DeltaTable::Rewrite rewrite;
    rewrite.predicate = "event IS NULL AND written_at < " + std::to_string(older_than.value);
    deleted = 0;
    for (const auto& [path, add] : snapshot.files) {
      const auto rows = table.ReadFiles({add}, schema);
      arrow::BooleanBuilder keep;
      std::int64_t dropped = 0;
      for (std::int64_t r = 0; r < rows->num_rows(); ++r) {
        const auto written = delta::TimestampCell(*rows, "written_at", r);
        const bool old_batch = !delta::TextCell(*rows, "event", r) && written && *written < older_than.value;
        dropped += old_batch;
        if (!keep.Append(!old_batch).ok()) throw InternalError("selecting facts rows");
      }
      if (dropped == 0) continue;
      deleted += dropped;
      std::shared_ptr<arrow::Array> mask;
      if (!keep.Finish(&mask).ok()) throw InternalError("selecting facts rows");
      auto kept = arrow::compute::Filter(rows, mask);
      if (!kept.ok()) throw InternalError("selecting facts rows: " + kept.status().ToString());
      rewrite.remove.push_back(add);
      if (kept->table()->num_rows() > 0) rewrite.AddPart(*kept->table());
    }
    rewrite.commit = !dry_run && !rewrite.remove.empty();
    return rewrite;
  }, options);
  return deleted;
}

}  // namespace mssql_cdc
