// The environment variables stores read their settings from (each store's header names which).
#pragma once

#include <cstdlib>
#include <string>

namespace mssql_cdc::storage {

// The value of `name`; empty when it is unset, which every store treats as not given.
inline std::string EnvironmentVariable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace mssql_cdc::storage
