// `mssql-cdc tables PIPELINE.toml`: the capture instances on the pipeline's source, which of
// them a pipeline over every table streams (fleet/tables_to_stream.h), and those as the
// pipeline file's tables line. Reads the file's [source] only, so a new file may list no
// tables yet; never writes anything.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/pipeline_config.h"
#include "fleet/tables_to_stream.h"
#include "source/open_source.h"

namespace mssql_cdc::cli {
namespace {

void ListTables(const std::string& file, bool as_json) {
  const auto options = SourceOptions::Parse(LoadPipelineSource(file), SourceOptions::CaptureInstanceRule::kNotNeeded);
  const auto judged = JudgeInstances(MakeSourceFactory(options)()->ListCaptureInstances());
  nlohmann::json streamed = nlohmann::json::array();
  for (const auto& instance : judged) {
    if (instance.stream) streamed.push_back(instance.capture_instance);
  }
  if (as_json) {
    nlohmann::json out = {{"tables", streamed}, {"instances", nlohmann::json::array()}};
    for (const auto& instance : judged) {
      out["instances"].push_back({{"capture_instance", instance.capture_instance}, {"table", instance.table},
                                  {"stream", instance.stream}, {"why_not", instance.why_not}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  for (const auto& instance : judged) {
    std::cout << instance.table << ": " << instance.capture_instance
              << (instance.stream ? "" : " (left out: " + instance.why_not + ")") << "\n";
  }
  std::cout << "tables = " << streamed.dump() << "\n";
}

}  // namespace

void AddTablesCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "tables",
      "List the capture instances on the pipeline's source and print the tables line of a "
      "pipeline over every table (one instance per table, the heartbeat's left out)");
  cmd->add_option("pipeline", *file, "The pipeline file (only its [source] is read)")->required();
  cmd->add_flag("--json", *as_json, "Print JSON");
  cmd->callback([file, as_json] { ListTables(*file, *as_json); });
}

}  // namespace mssql_cdc::cli
