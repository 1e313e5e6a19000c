// `mssql-cdc apply-changes PIPELINE.toml [--table CI ...]`: brings the pipeline's silver tables
// up to date with their bronze once, as `run` does after each batch (docs/silver.md), without
// running the streams: for a pipeline whose `run` was stopped, or to rebuild silver on demand.
// Asks the source only which capture instances the table has and its unique index; never
// writes to it. Exit status 0, or 2 for bad input.
#include <spdlog/spdlog.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"
#include "core/user_text.h"
#include "engine/engine_limits.h"
#include "fleet/stream_group.h"
#include "schema_change/table_instances.h"
#include "silver/apply_changes.h"
#include "source/open_source.h"

namespace mssql_cdc::cli {
namespace {

void ApplyPipeline(const std::string& file, const std::vector<std::string>& only) {
  const PipelineConfig config = LoadPipelineConfig(file);
  if (!config.many.silver) {
    throw ConfigError("pipeline file " + file + " has no [silver] section: add one, e.g.\n  [silver]\n"
                      "  target = \"lake/silver/{ci}\"");
  }
  // Every table's input is checked, and its source asked, before any silver table is written.
  std::vector<ApplyChangesOptions> calls;
  for (const auto& table : SelectedTables(config, only)) {
    const StreamConfig stream = TableStreamConfig(config.many, table);
    ApplyChangesOptions call = TableSilverOptions(config.many, stream);
    std::unique_ptr<Source> source = MakeSourceFactory(stream.source)();
    const CaptureInstanceInfo instance = source->ResolveCaptureInstance(stream.source.capture_instance);
    for (const auto& i : TableInstances::Of(*source, instance).all()) call.capture_instances.push_back(i.name);
    if (call.keys.empty()) call.keys = instance.index_columns;
    if (call.keys.empty()) {
      throw ConfigError("capture instance " + QuoteUserText(instance.name) +
                        " has no unique index to key its silver table by; give its keys in [silver.keys]");
    }
    calls.push_back(std::move(call));
  }
  for (const auto& call : calls) {
    const ApplyResult result = ApplyChanges(call);
    if (!result.bronze_found) {
      std::cout << call.silver << ": bronze " << call.bronze << " does not exist yet; nothing applied\n";
      continue;
    }
    std::cout << call.silver << ": " << result.bronze_rows << " bronze rows, " << result.upserted
              << " upserted, " << result.deleted << " deleted" << (result.rebuilt ? ", rebuilt" : "")
              << (result.runs_spilled > 0 ? " (" + std::to_string(result.runs_spilled) + " runs, " +
                                                FormatByteSize(result.spilled_bytes) + " spilled to disk)"
                                          : std::string())
              << "; applied up to " << result.applied_lsn.value_or("-") << ", finalized until "
              << (result.finalized_until ? FormatDateTime(result.finalized_until->value, 0) : std::string("-")) << "\n";
  }
}

}  // namespace

void AddApplyChangesCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "apply-changes", "bring the pipeline's silver tables up to date with bronze once");
  auto file = std::make_shared<std::string>();
  auto tables = std::make_shared<std::vector<std::string>>();
  command->add_option("pipeline", *file, "pipeline file (TOML) with a [silver] section")->required();
  command->add_option("--table", *tables, "only this capture instance's silver table (repeatable)");
  command->callback([file, tables] { ApplyPipeline(*file, *tables); });
}

}  // namespace mssql_cdc::cli
