// The mssql-cdc executable.
#include "cli/command_line.h"
#include "storage/store.h"

int main(int argc, char** argv) {
  const int status = mssql_cdc::cli::RunCommandLine(argc, argv);
  mssql_cdc::storage::ReleaseObjectStores();
  return status;
}
