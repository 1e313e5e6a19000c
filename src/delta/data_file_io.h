// Small helpers shared by the data-file writer and reader and the table (internal to the
// delta component).
#pragma once

#include "core/arrow_status.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "core/errors.h"
#include "core/percent_encoding.h"

namespace mssql_cdc::delta {

// `name` under `root` with exactly one '/' between them.
inline std::string JoinPath(const std::string& root, const std::string& name) {
  if (root.empty() || root.back() == '/') return root + name;
  return root + "/" + name;
}

// add.path is a URI reference (Spark escapes characters such as spaces and '%' in it): the
// file's path under the table root.
inline std::string DataFileRelativePath(const std::string& add_path) {
  return PercentDecodeLenient(add_path);
}

// A random (version 4, RFC 4122 variant) UUID: data file names must not collide across
// writers and processes, and a new table's metadata id is one.
inline std::string RandomUuid() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t high = generator(), low = generator();
  high = (high & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;   // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(high >> 32), static_cast<unsigned>((high >> 16) & 0xFFFF),
                static_cast<unsigned>(high & 0xFFFF), static_cast<unsigned>(low >> 48),
                static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFULL));
  return out;
}

}  // namespace mssql_cdc::delta
