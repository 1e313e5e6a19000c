#include "source/open_source.h"

#include <string>

#include "core/errors.h"
#include "source/odbc/odbc_source.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc {

SourceFactory MakeSourceFactory(const SourceOptions& options) {
  switch (options.backend) {
    case Backend::kSim: {
      if (!options.sim_path || options.sim_path->empty()) {
        throw ConfigError(
            "backend=sim needs the simPath option: the simulated database file to read "
            "(create one with `mssql-cdc sim create --db PATH`)");
      }
      // The file is opened per call, not here: each reading thread gets its own connection,
      // and a file that is missing fails where it is read, as SourceError.
      return [path = *options.sim_path]() { return OpenSimSource(path); };
    }
    case Backend::kOdbc:
      // The connection string is checked now, so a bad one fails before any thread starts;
      // connecting waits for the call, as each reading thread opens its own.
      odbc::CheckOdbcOptions(options);
      return [options]() { return odbc::OpenOdbcSource(options); };
  }
  throw ConfigError("unknown backend " + std::to_string(static_cast<int>(options.backend)));
}

}  // namespace mssql_cdc
