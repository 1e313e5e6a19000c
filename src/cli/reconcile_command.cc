// `mssql-cdc reconcile PIPELINE.toml [--table CI ...]`: compares each silver table of the
// pipeline with its SQL Server table (docs/reconcile.md) and prints what it found; with
// --report-table, appends the report rows to that Delta table. Only reads the source. Exit
// status 0 when every bucket matches or is in flight and no key failed, 1 when one did not,
// 2 for bad input.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/pipeline_config.h"
#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "engine/engine_limits.h"
#include "engine/finalization.h"
#include "engine/table_schemas.h"
#include "fleet/stream_group.h"
#include "reconcile/reconcile.h"
#include "source/open_source.h"

namespace mssql_cdc::cli {
namespace {

struct ReconcileArgs {
  std::string file;
  std::vector<std::string> tables;
  std::int64_t bucket_rows = 1'000'000;
  double sample = 0.01;
  std::optional<std::uint64_t> seed;
  std::string report_table;
};

int ReconcilePipeline(const ReconcileArgs& args) {
  CheckReconcileOptions(args.bucket_rows, args.sample);
  const PipelineConfig config = LoadPipelineConfig(args.file);
  if (!config.many.silver) {
    throw ConfigError("pipeline file " + args.file + " has no [silver] section: reconcile compares silver "
                      "tables with their source; add one, e.g.\n  [silver]\n  target = \"lake/silver/{ci}\"");
  }
  const std::vector<TableSpec> selected = SelectedTables(config, args.tables);
  if (!args.report_table.empty()) CheckReportTable(args.report_table);
  bool all_match = true;
  std::vector<ReportRun> runs;
  std::vector<ReportRow> rows;
  std::vector<std::shared_ptr<arrow::RecordBatch>> reports;
  for (const auto& table : selected) {
    const StreamConfig stream = TableStreamConfig(config.many, table);
    const ApplyChangesOptions silver = TableSilverOptions(config.many, stream);
    if (!delta::DeltaTable::Exists(silver.silver)) {
      throw ConfigError("silver table " + silver.silver + " does not exist yet: run `mssql-cdc run` or "
                        "`mssql-cdc apply-changes` first");
    }
    CheckExistingTable(silver.control, TableKind::kControl);
    CheckExistingTable(silver.bronze, TableKind::kBronze);
    if (silver.facts) CheckExistingTable(*silver.facts, TableKind::kFacts);
    // Silver's position before its version: silver is at least as current as the position says.
    LakeState state;
    state.silver_name = silver.silver;
    state.silver_lsn = SilverCurrentTo(ReadSilverPosition(silver.control, silver.silver));
    auto silver_table = delta::DeltaTable::Open(silver.silver);
    auto bronze_table = delta::DeltaTable::Open(silver.bronze);
    state.silver_schema = silver_table.state().schema();
    state.silver_properties = silver_table.state().metadata.configuration;
    state.silver_version = silver_table.state().version;
    state.bronze_name = silver.bronze;
    state.bronze_schema = bronze_table.state().schema();
    state.bronze_id = bronze_table.state().metadata.id;
    state.has_facts = silver.facts.has_value();
    std::unique_ptr<Source> source = MakeSourceFactory(stream.source)();
    ReconcileOptions options;
    options.capture_instance = stream.source.capture_instance;
    options.keys = silver.keys;
    options.bucket_rows = args.bucket_rows;
    options.sample = args.sample;
    options.seed = args.seed;
    options.memory_budget = config.many.limits.memory_budget;
    options.spill_directory = config.many.limits.spill_directory;
    DeltaLakeSide lake(std::move(silver_table), std::move(bronze_table), silver.facts);
    const ReconcileResult result = Reconcile(options, state, *source, lake);
    std::cout << silver.silver << ": " << result.buckets << " buckets, " << result.match << " match, "
              << result.in_flight << " in flight, " << result.mismatch << " mismatch, " << result.hashed
              << " compared row by row";
    if (result.parts > 1) {
      std::cout << " (in " << result.parts << " parts, " << FormatByteSize(result.spilled_bytes) << " spilled to disk)";
    }
    for (const auto& [type, count] : result.failures) std::cout << "; " << type << " " << count;
    if (!result.keys_in_flight.empty()) {
      // The keys left out of the row comparison, the first few named.
      constexpr std::size_t kNamed = 5;
      std::cout << "; " << result.keys_in_flight.size() << " key"
                << (result.keys_in_flight.size() == 1 ? "" : "s") << " in flight left out (";
      for (std::size_t i = 0; i < result.keys_in_flight.size() && i < kNamed; ++i) {
        std::cout << (i > 0 ? ", " : "") << result.keys_in_flight[i];
      }
      std::cout << (result.keys_in_flight.size() > kNamed ? ", ...)" : ")");
    }
    std::cout << " (silver version " << result.run.silver_version << " at " << result.run.silver_lsn.value_or("-")
              << ", source at " << result.source_lsn << ")\n";
    all_match = all_match && result.mismatch == 0 && result.failures.empty();
    reports.push_back(ReportBatch(result.run, result.report));
  }
  if (!args.report_table.empty()) {
    for (const auto& report : reports) AppendReport(args.report_table, report);
  }
  return all_match ? kExitOk : kExitFailed;
}

}  // namespace

void AddReconcileCommand(CLI::App& app) {
  auto* command = app.add_subcommand("reconcile", "compare the pipeline's silver tables with their source tables");
  auto args = std::make_shared<ReconcileArgs>();
  command->add_option("pipeline", args->file, "pipeline file (TOML) with a [silver] section")->required();
  command->add_option("--table", args->tables, "only this capture instance's silver table (repeatable)");
  command->add_option("--bucket-rows", args->bucket_rows, "rows per compared bucket (default 1000000)");
  command->add_option("--sample", args->sample,
                      "fraction of matching buckets also compared row by row, in [0, 1] (default 0.01)");
  command->add_option("--seed", args->seed, "seed of the sample, for a repeatable run");
  command->add_option("--report-table", args->report_table, "Delta table the report rows are appended to");
  command->callback([args] {
    const int status = ReconcilePipeline(*args);
    if (status != kExitOk) ExitWith(status);
  });
}

}  // namespace mssql_cdc::cli
