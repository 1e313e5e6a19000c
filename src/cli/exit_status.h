// The exit statuses of every mssql-cdc command (documented in docs/pipelines.md), and the two
// helpers commands use to end with one and to check numeric arguments.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace mssql_cdc::cli {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,    // a table (or the command's own work) failed
  kExitBadInput = 2,  // a bad command line, pipeline file or option; nothing was written
  kExitInUse = 3,     // a table was refused because another run owns its checkpoint
};

// Ends the command with `status`: main() returns it without printing anything more.
[[noreturn]] inline void ExitWith(int status) { throw CLI::RuntimeError(status); }

// An argument that must be a finite number greater than zero, e.g. "seconds"; its message
// names what was given rather than the range of a double.
CLI::Validator PositiveNumber(const std::string& what);

}  // namespace mssql_cdc::cli
