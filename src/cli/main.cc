// The mssql-cdc executable.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"mssql-cdc: SQL Server Change Data Capture into Delta Lake"};
  app.require_subcommand(1);
  mssql_cdc::cli::AddSimCommands(app);
  mssql_cdc::cli::AddSimServeCommands(app);
  mssql_cdc::cli::AddDemoCommand(app);
  mssql_cdc::cli::AddRunCommand(app);
  mssql_cdc::cli::AddStatusCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const mssql_cdc::Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mssql-cdc: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
