#include "cli/command_line.h"

#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/errors.h"
#include "core/run_allocator.h"

namespace mssql_cdc::cli {

int RunCommandLine(int argc, char** argv) {
  // Before Arrow first allocates: the pool that keeps a batch's pages for the next one and
  // gives them back when the streams are still (core/run_allocator.h).
  UseRunAllocator();
  CLI::App app{"mssql-cdc: SQL Server Change Data Capture into Delta Lake"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mssql-cdc ") + MSSQL_CDC_VERSION);
  AddSimCommands(app);
  AddSimServeCommands(app);
  AddDemoCommand(app);
  AddRunCommand(app);
  AddStatusCommand(app);
  AddSwitchesCommand(app);
  AddSeedCommand(app);
  AddApplyChangesCommand(app);
  AddTablesCommand(app);
  AddReconcileCommand(app);
  AddMaintenanceCommands(app);
  int status = kExitOk;
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    status = app.exit(e);  // --help
  } catch (const CLI::RuntimeError& e) {
    status = e.get_exit_code();  // a command's own status (ExitWith); it said what happened
  } catch (const CLI::ParseError& e) {
    std::cerr << "mssql-cdc: " << e.what() << " (see mssql-cdc --help)\n";
    status = kExitBadInput;
  } catch (const Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    status = kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "mssql-cdc: " << e.what() << "\n";
    status = kExitBadInput;
  }
  std::cout.flush();
  return status;
}

}  // namespace mssql_cdc::cli
