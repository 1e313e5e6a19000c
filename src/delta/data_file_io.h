// Small helpers shared by the data-file writer and reader (internal to the delta component).
#pragma once

#include <arrow/status.h>

#include <string>

#include "core/errors.h"

namespace mssql_cdc::delta {

// `name` under `root` with exactly one '/' between them.
inline std::string JoinPath(const std::string& root, const std::string& name) {
  if (root.empty() || root.back() == '/') return root + name;
  return root + "/" + name;
}

// Arrow and Parquet report I/O failures as a Status; the engine reports them as SourceError.
inline void ThrowIfError(const arrow::Status& status, const std::string& what) {
  if (!status.ok()) throw SourceError(what + ": " + status.ToString());
}

}  // namespace mssql_cdc::delta
