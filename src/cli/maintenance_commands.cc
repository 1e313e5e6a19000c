// `mssql-cdc optimize PIPELINE.toml` and `mssql-cdc vacuum PIPELINE.toml` (docs/maintenance.md):
// compaction and vacuum of the pipeline's tables, safe next to its running `run`. Exit status
// 0, or 2 for bad input (nothing changed).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "maintenance/maintenance.h"

namespace mssql_cdc::cli {
namespace {

struct MaintenanceArgs {
  std::string file;
  std::vector<std::string> tables;
  double target_file_mb = 128;
  double retention_hours = 168;
  bool dry_run = false;
  std::optional<double> facts_retention_days;
};

// The pipeline and its selected capture instances (in the pipeline's spelling).
std::pair<PipelineConfig, std::vector<std::string>> Selected(const MaintenanceArgs& args) {
  PipelineConfig config = LoadPipelineConfig(args.file);
  std::vector<std::string> only;
  if (!args.tables.empty()) {
    for (const auto& table : SelectedTables(config, args.tables)) only.push_back(table.capture_instance);
  }
  return {std::move(config), std::move(only)};
}

void Optimize(const MaintenanceArgs& args) {
  const auto [config, only] = Selected(args);
  const auto bytes = static_cast<std::int64_t>(args.target_file_mb * 1024 * 1024);
  for (const auto& summary : CompactTables(PipelineTables(config.many, only), bytes)) {
    std::cout << summary.table << ": ";
    if (summary.version < 0) {
      std::cout << "nothing to compact\n";
    } else {
      std::cout << summary.files_removed << " files compacted into " << summary.files_added << " (version "
                << summary.version << ")\n";
    }
  }
}

void Vacuum(const MaintenanceArgs& args) {
  const auto [config, only] = Selected(args);
  const auto retention_ms = static_cast<std::int64_t>(args.retention_hours * 3600 * 1000);
  const auto [facts, targets] = PipelineFactsAndTargets(config.many);
  CheckVacuumRetention(retention_ms, LongestBatchMillis(facts, targets));
  if (args.facts_retention_days && !facts) {
    throw ConfigError("--facts-retention-days: the pipeline has no facts_table");
  }
  if (args.facts_retention_days) {
    const auto cutoff = UtcMicros{NowUtc().value - static_cast<std::int64_t>(*args.facts_retention_days * kMicrosPerDay)};
    std::cout << *facts << ": " << DeleteOldBatchFacts(*facts, cutoff, args.dry_run)
              << " micro-batch facts rows older than " << *args.facts_retention_days << " days "
              << (args.dry_run ? "would be deleted" : "deleted") << "\n";
  }
  for (const auto& summary : VacuumTables(PipelineTables(config.many, only), retention_ms, args.dry_run)) {
    std::cout << summary.table << ": " << summary.deleted.size() << " files "
              << (args.dry_run ? "would be deleted" : "deleted") << "\n";
    if (args.dry_run) {
      for (const auto& path : summary.deleted) std::cout << "  " << path << "\n";
    }
  }
}

}  // namespace

void AddMaintenanceCommands(CLI::App& app) {
  auto optimize_args = std::make_shared<MaintenanceArgs>();
  auto* optimize = app.add_subcommand("optimize", "compact the small files of the pipeline's tables");
  optimize->add_option("pipeline", optimize_args->file, "pipeline file (TOML)")->required();
  optimize->add_option("--table", optimize_args->tables, "only this capture instance's tables (repeatable)");
  optimize->add_option("--target-file-mb", optimize_args->target_file_mb, "size of a compacted file (default 128)")
      ->check(PositiveNumber("megabytes"));
  optimize->callback([optimize_args] { Optimize(*optimize_args); });

  auto vacuum_args = std::make_shared<MaintenanceArgs>();
  auto* vacuum = app.add_subcommand("vacuum", "delete the files no recent version of the pipeline's tables names");
  vacuum->add_option("pipeline", vacuum_args->file, "pipeline file (TOML)")->required();
  vacuum->add_option("--table", vacuum_args->tables, "only this capture instance's tables (repeatable)");
  vacuum->add_option("--retention-hours", vacuum_args->retention_hours,
                     "keep files any version of the last this many hours names (default 168)")
      ->check(PositiveNumber("hours"));
  vacuum->add_flag("--dry-run", vacuum_args->dry_run, "list the files, delete nothing");
  vacuum->add_option("--facts-retention-days", vacuum_args->facts_retention_days,
                     "also delete micro-batch facts rows older than this many days (event rows stay)")
      ->check(PositiveNumber("days"));
  vacuum->callback([vacuum_args] { Vacuum(*vacuum_args); });
}

}  // namespace mssql_cdc::cli
