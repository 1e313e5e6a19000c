// Subcommands of the mssql-cdc executable; each file adds its own to the app. Commands report
// failures by throwing mssql_cdc::Error, which main() prints as one line.
#pragma once

#include <CLI/CLI.hpp>

namespace mssql_cdc::cli {

void AddSimCommands(CLI::App& app);   // sim_commands.cc: `mssql-cdc sim ...`
void AddSimServeCommands(CLI::App& app);  // sim_serve_command.cc: `sim serve`, `login`, `grant`
void AddSimTlsCommand(CLI::App& sim);  // sim_tls_command.cc: `sim tls-cert`
void AddDemoCommand(CLI::App& app);   // demo_command.cc: `mssql-cdc demo`
void AddRunCommand(CLI::App& app);    // run_command.cc: `mssql-cdc run PIPELINE.toml`
void AddStatusCommand(CLI::App& app); // status_command.cc: `mssql-cdc status PIPELINE.toml`
void AddSeedCommand(CLI::App& app);   // seed_command.cc: `mssql-cdc seed PIPELINE.toml ...`
void AddSwitchesCommand(CLI::App& app);      // switches_command.cc: `mssql-cdc switches PIPELINE.toml`
void AddReconcileCommand(CLI::App& app);     // reconcile_command.cc: `mssql-cdc reconcile PIPELINE.toml`
void AddMaintenanceCommands(CLI::App& app);  // maintenance_commands.cc: `optimize`, `vacuum`
void AddApplyChangesCommand(CLI::App& app);  // apply_changes_command.cc: `mssql-cdc apply-changes PIPELINE.toml`
void AddTablesCommand(CLI::App& app);        // tables_command.cc: `mssql-cdc tables PIPELINE.toml`

}  // namespace mssql_cdc::cli
