// Which Source backend the engine tests read through. The same tests run twice under ctest:
// once reading the sim database directly, once through the odbc backend, unixODBC, FreeTDS and
// an in-process `sim serve` (ctest names those "odbc.<test>" and sets
// MSSQL_CDC_TEST_BACKEND=odbc). Both must give the same bronze tables.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "core/options.h"
#include "tests/testing/served_sim.h"

namespace mssql_cdc::testing {

inline bool TestsReadThroughOdbc() {
  const char* backend = std::getenv("MSSQL_CDC_TEST_BACKEND");
  return backend != nullptr && std::string(backend) == "odbc";
}

// The source options that read the sim database at `path` with the backend under test;
// `served` keeps the server of the odbc backend alive (started on first use).
inline Options BackendOptions(const std::string& path, std::unique_ptr<ServedSim>& served) {
  if (!TestsReadThroughOdbc()) return Options{{"backend", "sim"}, {"simPath", path}};
  if (!served) served = std::make_unique<ServedSim>(path);
  return served->SourceOptionsText();
}

}  // namespace mssql_cdc::testing
