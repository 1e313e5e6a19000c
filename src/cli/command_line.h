// The mssql-cdc command line: `run`, `status`, `demo` and `sim ...`, parsed and run to its
// exit status. The executable's main() and the Python package's `mssql-cdc` console script
// (installed with the wheel) are both this one function, so the two commands are one.
#pragma once

namespace mssql_cdc::cli {

// Runs the command argv names (argv[0] is the program's name) and returns the process's
// exit status (exit_status.h). Errors are printed to stderr as one line; it never throws.
int RunCommandLine(int argc, char** argv);

}  // namespace mssql_cdc::cli
