// The mssql-cdc executable.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  // Arrow's jemalloc pool gives a burst's memory back to the system within seconds; mimalloc
  // (the wheel's default) and glibc's malloc keep it (decision 0007, bench/RESULTS.md). Set
  // before Arrow first allocates; a user's own ARROW_DEFAULT_MEMORY_POOL wins.
  setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", /*overwrite=*/0);
  using namespace mssql_cdc::cli;
  CLI::App app{"mssql-cdc: SQL Server Change Data Capture into Delta Lake"};
  app.require_subcommand(1);
  AddSimCommands(app);
  AddSimServeCommands(app);
  AddDemoCommand(app);
  AddRunCommand(app);
  AddStatusCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own status (ExitWith); it said what happened
  } catch (const CLI::ParseError& e) {
    std::cerr << "mssql-cdc: " << e.what() << " (see mssql-cdc --help)\n";
    return kExitBadInput;
  } catch (const mssql_cdc::Error& e) {
    std::cerr << "mssql-cdc: " << e.class_name() << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "mssql-cdc: " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}
