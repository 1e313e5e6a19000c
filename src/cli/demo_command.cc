#include "cli/commands.h"

namespace mssql_cdc::cli {

void AddDemoCommand(CLI::App& app) {
  app.add_subcommand("demo", "Run the main job on the embedded simulated SQL Server");
}

}  // namespace mssql_cdc::cli
