// `mssql-cdc seed PIPELINE.toml --table CI (--from-delta PATH | --from-parquet PATH)
// (--as-of-time TIME | --as-of-lsn LSN) [--allow-missing-columns] [--reseed]`: a copy of a
// table already in the lake becomes the snapshot in its stream's bronze table
// (engine/native_seed.h), so that the stream's bootstrap reads nothing from SQL Server.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/pipeline_config.h"
#include "core/errors.h"
#include "core/lsn.h"
#include "core/time.h"
#include "engine/native_seed.h"
#include "fleet/stream_group.h"

namespace mssql_cdc::cli {
namespace {

struct SeedArgs {
  std::string file;
  std::string table;
  std::string from_delta;
  std::string from_parquet;
  std::string as_of_time;
  std::string as_of_lsn;
  bool allow_missing_columns = false;
  bool reseed = false;
};

const TableSpec& FindTable(const PipelineConfig& config, const std::string& name) {
  for (const auto& table : config.many.tables) {
    if (table.capture_instance == name) return table;
  }
  std::string listed;
  for (const auto& table : config.many.tables) listed += (listed.empty() ? "" : ", ") + table.capture_instance;
  throw ConfigError("pipeline " + config.file + " has no table '" + name + "'; its tables are " + listed);
}

void Seed(const SeedArgs& args) {
  const PipelineConfig config = LoadPipelineConfig(args.file);
  NativeSeedRequest request;
  request.stream = TableStreamConfig(config.many, FindTable(config, args.table));
  if (!args.from_delta.empty()) {
    request.copy = args.from_delta;
    request.format = SeedCopyFormat::kDelta;
  } else {
    request.copy = args.from_parquet;
    request.format = SeedCopyFormat::kParquet;
  }
  if (!args.as_of_time.empty()) {
    const auto micros = ParseDateTime(args.as_of_time);
    if (!micros) {
      throw ConfigError("--as-of-time '" + args.as_of_time + "' is not a time: give the UTC "
                        "time the copy started being read, as YYYY-MM-DD HH:MM:SS[.fff]");
    }
    request.as_of.time = UtcMicros{*micros};
  } else {
    request.as_of.lsn = Lsn::ParseLenient(args.as_of_lsn);
  }
  request.allow_missing_columns = args.allow_missing_columns;
  request.reseed = args.reseed;
  const NativeSeedResult result = SeedNatively(request);
  std::cout << (result.written ? "seeded " : "already seeded ") << request.stream.params.target
            << " with " << result.rows << " rows as of LSN " << result.offset.lsn.ToString()
            << (result.offset.commit_ts ? " (" + FormatIsoMillis(result.offset.commit_ts->value) + " UTC)" : "")
            << "\n";
}

}  // namespace

void AddSeedCommand(CLI::App& app) {
  auto args = std::make_shared<SeedArgs>();
  auto* cmd = app.add_subcommand(
      "seed", "Write a copy of a table already in the lake into its bronze table as the snapshot");
  cmd->add_option("pipeline", args->file, "The pipeline file")->required();
  cmd->add_option("--table", args->table, "The table's capture instance, as the file lists it")->required();
  auto* delta = cmd->add_option("--from-delta", args->from_delta, "The copy: a Delta table's directory");
  auto* parquet = cmd->add_option("--from-parquet", args->from_parquet,
                                  "The copy: a Parquet file, or a directory of .parquet files");
  delta->excludes(parquet);
  auto* time = cmd->add_option("--as-of-time", args->as_of_time,
                               "When the copy started being read, UTC: YYYY-MM-DD HH:MM:SS[.fff]");
  auto* lsn = cmd->add_option("--as-of-lsn", args->as_of_lsn,
                              "An LSN recorded before the copy was read (0x + 20 hex digits)");
  time->excludes(lsn);
  cmd->add_flag("--allow-missing-columns", args->allow_missing_columns,
                "Captured columns the copy lacks read NULL (the key is always required)");
  cmd->add_flag("--reseed", args->reseed, "Replace an older snapshot bronze holds");
  cmd->callback([args, delta, parquet, time, lsn] {
    if (delta->count() + parquet->count() != 1) {
      throw ConfigError("seed: give the copy with --from-delta PATH or --from-parquet PATH");
    }
    if (time->count() + lsn->count() != 1) {
      throw ConfigError("seed: give when the copy was read with --as-of-time TIME (UTC) or "
                        "--as-of-lsn LSN");
    }
    Seed(*args);
  });
}

}  // namespace mssql_cdc::cli
