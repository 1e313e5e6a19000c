// Day-2 maintenance of a pipeline's tables (docs/maintenance.md): compaction of the small files
// every batch leaves, vacuum of the files no recent version names, and deletion of old
// micro-batch facts rows. Safe next to a running stream: every change is a Delta commit that
// loses a race without harm, and vacuum never deletes a file younger than its retention, which
// must be longer than the streams' longest batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleet/stream_group.h"

namespace mssql_cdc {

// The Delta tables of a pipeline the native engine writes, each once: every selected table's
// bronze, its plans table and silver table when they exist, and the shared facts and control
// tables. `only`: capture instances to keep (empty: all).
std::vector<std::string> PipelineTables(const ManyConfig& config, const std::vector<std::string>& only);

struct CompactionSummary {
  std::string table;
  std::int64_t files_removed = 0, files_added = 0;
  std::int64_t version = -1;  // the compaction's commit; -1 when there was nothing to compact
};
std::vector<CompactionSummary> CompactTables(const std::vector<std::string>& tables, std::int64_t target_file_bytes);

// The shared facts table (if any) and the bronze table of each of a pipeline's tables.
struct FactsAndTargets {
  std::optional<std::string> facts;
  std::vector<std::string> targets;
};
FactsAndTargets PipelineFactsAndTargets(const ManyConfig& config);

// The longest batch (or snapshot wave) the facts table records for these bronze tables, in
// milliseconds; 0 without a facts table or rows.
std::int64_t LongestBatchMillis(const std::optional<std::string>& facts, const std::vector<std::string>& targets);

// ConfigError, naming both, when `retention_ms` is not longer than `longest_batch_ms`: a file a
// batch writes before it commits would look forgotten to vacuum while that batch runs.
void CheckVacuumRetention(std::int64_t retention_ms, std::int64_t longest_batch_ms);

struct VacuumSummary {
  std::string table;
  std::vector<std::string> deleted;
};
std::vector<VacuumSummary> VacuumTables(const std::vector<std::string>& tables, std::int64_t retention_ms,
                                        bool dry_run);

// Deletes the micro-batch facts rows (those with no event) written before `older_than` from
// the facts table, in one commit; event rows (snapshots, switches, schema changes) are never
// deleted. Returns how many rows went (with `dry_run`, would go; nothing is committed).
std::int64_t DeleteOldBatchFacts(const std::string& facts, UtcMicros older_than, bool dry_run = false);

}  // namespace mssql_cdc
