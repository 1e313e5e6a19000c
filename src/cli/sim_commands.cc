#include "cli/commands.h"

namespace mssql_cdc::cli {

void AddSimCommands(CLI::App& app) {
  app.add_subcommand("sim", "Work with a simulated SQL Server CDC database")->require_subcommand(1);
}

}  // namespace mssql_cdc::cli
