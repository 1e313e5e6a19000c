// A pipeline file: the TOML form of StreamGroup's configuration, read by `mssql-cdc run` and
// `mssql-cdc status` (docs/pipelines.md is the users' guide).
//
//   [source]   source options shared by every table (backend, simPath, connectionString, ...);
//              snake_case names are accepted (connection_string); `<option>_env = "VAR"`
//              takes the value from the environment variable VAR, which is how secrets
//              (password_env, connection_string_env) stay out of the file.
//   [stream]   target, app_id, checkpoint (templates with {ci}), facts_table, control_table,
//              trigger, bootstrap, granularity and the other to_delta parameters.
//   tables = ["dbo_orders", ...]            or
//   [tables.dbo_orders]  options of that table, overriding the shared ones.
//   [engine]   what the process may use: memory_budget, connections, workers, max_streams
//              (engine/engine_limits.h); optional.
//
// Relative paths (simPath, metricsPath, target, checkpoint, facts_table, control_table) are
// taken relative to the file's directory, so a run does not depend on the working directory.
// Every refusal is a ConfigError naming the file and what is wrong; secrets never appear in
// one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/trigger.h"
#include "fleet/stream_group.h"
#include "maintenance/maintenance_schedule.h"

namespace mssql_cdc::cli {

struct PipelineConfig {
  std::string file;          // as given
  ManyConfig many;           // templates and paths resolved
  Trigger trigger;           // the [stream] trigger, parsed
  std::optional<MaintenanceSchedule> maintenance;  // [maintenance]: run's own compaction and vacuum
  std::optional<std::string> facts_table;  // resolved
  // Source options whose values came from the environment, for the user's information.
  std::vector<std::string> from_environment;
  // Notes for the user (e.g. a password written in the file); never holding a secret value.
  std::vector<std::string> warnings;
};

// Looks up an environment variable; nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;
std::optional<std::string> ProcessEnvironment(const std::string& name);

enum class Secrets {
  kRequired,  // an `<option>_env` variable that is unset is an error (run)
  kOptional,  // it leaves the option out (status without --source, which does not connect)
};

// Reads and validates the file's structure (not yet each table's options: StartMany does).
PipelineConfig LoadPipelineConfig(const std::string& file, Secrets secrets = Secrets::kRequired,
                                  const EnvironmentLookup& environment = ProcessEnvironment);

// Only the file's [source] options (checked as LoadPipelineConfig checks them), for a file
// that may list no tables yet.
Options LoadPipelineSource(const std::string& file, Secrets secrets = Secrets::kRequired,
                           const EnvironmentLookup& environment = ProcessEnvironment);

// The tables `--table` options name (names matched ignoring case), in the pipeline's spelling
// and order; all of them when `names` is empty. ConfigError for a name not in the pipeline.
std::vector<TableSpec> SelectedTables(const PipelineConfig& config, const std::vector<std::string>& names);

}  // namespace mssql_cdc::cli
