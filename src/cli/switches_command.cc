// `mssql-cdc switches PIPELINE.toml`: per table of a pipeline, whether its stream has passed the
// switch to the table's newest capture instance, so that the DBA knows when the older one may
// be disabled (docs/schema-changes.md, step 5). Asks the source which instances the table has
// and reads the facts table; writes nothing. Exit status 0 when every stream has passed every
// switch there is (or there is none), 1 when an older instance must still be kept, 2 for bad
// input.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "core/errors.h"
#include "delta/table.h"
#include "fleet/stream_group.h"
#include "schema_change/batch_schema.h"
#include "schema_change/switch_progress.h"
#include "schema_change/table_instances.h"
#include "source/open_source.h"

namespace mssql_cdc::cli {
namespace {

using nlohmann::json;

struct TableSwitch {
  std::string capture_instance;  // as the pipeline names it
  std::string table;             // schema.table
  std::vector<std::string> instances;
  std::string state;   // "single", "pending", "not_reached", "waiting", "passed"
  std::string advice;  // one line for the DBA
  bool may_disable = true;
};

TableSwitch Judge(const StreamConfig& stream, const std::shared_ptr<arrow::Table>& facts) {
  TableSwitch out;
  out.capture_instance = stream.source.capture_instance;
  std::unique_ptr<Source> source = MakeSourceFactory(stream.source)();
  const CaptureInstanceInfo instance = source->ResolveCaptureInstance(stream.source.capture_instance);
  const TableInstances instances = TableInstances::Of(*source, instance);
  out.table = instances.table();
  for (const auto& i : instances.all()) out.instances.push_back(i.name);
  if (!instances.pending().empty()) {
    out.state = "pending";
    out.may_disable = false;
    out.advice = "capture instance '" + instances.pending().front().name +
                 "' waits for the capture job to reach its enable (its start LSN is still 0x00...); "
                 "keep every instance";
    return out;
  }
  if (instances.active().size() < 2) {
    out.state = "single";
    out.advice = "one capture instance (" + instances.active().front().name + "): nothing to switch";
    return out;
  }
  const CaptureInstanceInfo& older = instances.active()[instances.active().size() - 2];
  const CaptureInstanceInfo& newest = instances.active().back();
  std::optional<SwitchProgress> found;
  if (facts) {
    for (const auto& progress : SwitchesOf(*facts, stream.params.app_id)) {
      if (progress.to_instance == newest.name) found = progress;
    }
  }
  if (!found) {
    out.state = "not_reached";
    out.may_disable = false;
    out.advice = "the stream (app_id " + stream.params.app_id + ") has not reached '" + newest.name +
                 "' (from LSN " + newest.start_lsn.ToString() + ") yet: keep '" + older.name + "'";
  } else if (!found->passed()) {
    out.state = "waiting";
    out.may_disable = false;
    out.advice = "switched to '" + newest.name + "' in batch " + std::to_string(found->batch_id) +
                 "; wait for one more batch, then '" + older.name + "' may be disabled";
  } else {
    out.state = "passed";
    out.advice = "switched to '" + newest.name + "' in batch " + std::to_string(found->batch_id) +
                 " and went on (batch " + std::to_string(*found->latest_batch) + "): '" +
                 older.name + "' may be disabled";
  }
  return out;
}

int Switches(const std::string& file, bool as_json) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "mssql-cdc", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  PipelineConfig config;
  try {
    config = LoadPipelineConfig(file);
  } catch (const Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  std::shared_ptr<arrow::Table> facts;
  if (config.facts_table && delta::DeltaTable::Exists(*config.facts_table)) {
    // The switch events and each stream's newest micro-batch: SwitchesOf reads both.
    facts = delta::DeltaTable::Open(*config.facts_table).Read();
  }
  std::vector<TableSwitch> tables;
  for (const auto& table : config.many.tables) {
    tables.push_back(Judge(TableStreamConfig(config.many, table), facts));
  }
  bool all = true;
  for (const auto& t : tables) all = all && t.may_disable;
  if (as_json) {
    json out = {{"file", config.file}, {"every_stream_passed", all}, {"tables", json::array()}};
    for (const auto& t : tables) {
      out["tables"].push_back({{"capture_instance", t.capture_instance}, {"table", t.table},
                               {"instances", t.instances}, {"state", t.state},
                               {"may_disable_older", t.may_disable}, {"advice", t.advice}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& t : tables) {
      std::cout << t.capture_instance << " (" << t.table << "): " << t.advice << "\n";
    }
  }
  return all ? kExitOk : 1;
}

}  // namespace

void AddSwitchesCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "switches",
      "Per table of a pipeline file: whether its stream has passed the switch to the table's "
      "newest capture instance, so that the older one may be disabled (exit 0 when every "
      "stream has)");
  cmd->add_option("pipeline", *file, "The pipeline file")->required();
  cmd->add_flag("--json", *as_json, "Print JSON");
  cmd->callback([file, as_json] {
    const int status = Switches(*file, *as_json);
    if (status != kExitOk) ExitWith(status);
  });
}

}  // namespace mssql_cdc::cli
