#include "source/open_source.h"

#include <string>

#include "core/errors.h"
#include "source/sim_source.h"

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
      throw ConfigError(
          "backend=odbc: the ODBC backend is not in this build yet; use backend=sim with "
          "simPath set to a simulated database file");
  }
  throw ConfigError("unknown backend " + std::to_string(static_cast<int>(options.backend)));
}

}  // namespace mssql_cdc
