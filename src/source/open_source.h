// Opens the Source a set of source options names: backend `sim` reads simPath; `odbc` connects
// through unixODBC with connectionString, user and password. Every reading thread opens its own.
#pragma once

#include <functional>
#include <memory>

#include "core/source_options.h"
#include "source/source.h"

namespace mssql_cdc {

using SourceFactory = std::function<std::unique_ptr<Source>()>;

// Throws ConfigError for a backend this build cannot open, naming it.
SourceFactory MakeSourceFactory(const SourceOptions& options);

}  // namespace mssql_cdc
