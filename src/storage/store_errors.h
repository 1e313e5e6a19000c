// Arrow's filesystem errors as the engine's: access refused becomes a PermissionError, a
// missing bucket or container a ConfigError (both need a person), anything else a SourceError.
#pragma once

#include <arrow/status.h>

#include <string>

namespace mssql_cdc::storage {

// Throws; `doing` says what failed ("cannot read s3://bucket/key").
[[noreturn]] void ThrowStoreError(const arrow::Status& status, const std::string& doing);

}  // namespace mssql_cdc::storage
