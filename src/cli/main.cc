// The mssql-cdc executable.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/errors.h"
#include "core/run_allocator.h"

int main(int argc, char** argv) {
  // Before Arrow first allocates: the pool that keeps a batch's pages for the next one and
  // gives them back when the streams are still (core/run_allocator.h).
  mssql_cdc::UseRunAllocator();
  using namespace mssql_cdc::cli;
  CLI::App app{"mssql-cdc: SQL Server Change Data Capture into Delta Lake"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mssql-cdc ") + MSSQL_CDC_VERSION);
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
