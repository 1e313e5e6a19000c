// The mssql-cdc executable.
#include "cli/command_line.h"

int main(int argc, char** argv) { return mssql_cdc::cli::RunCommandLine(argc, argv); }
