// The sim backend of Source: reads a simulated SQL Server CDC database (the SQLite file of
// sim/storage.h) directly, read-only, next to a simulator writing it in WAL mode.
//
// Metadata comes from the catalog tables (cdc_change_tables, cdc_captured_columns, ...) with
// the meaning of the SQL Server function or procedure each call stands for (reference-design
// 3.6); change and snapshot reads decode the storage encodings into the output schema. Each
// call reads one consistent state of the file; each reader opens its own connection and
// holds one read snapshot until it is exhausted or destroyed.
#pragma once

#include <memory>
#include <string>

#include "source/source.h"

namespace mssql_cdc {

// Opens the sim database at `path` without creating or changing anything on disk. Throws
// SourceError, saying how to create one, when the path does not exist or is not a sim
// database, and when its format version is not the one this build reads.
std::unique_ptr<Source> OpenSimSource(const std::string& path);

}  // namespace mssql_cdc
