// The bounds of a snapshot range as snapshotChunks gives them (docs/reference/options.md): a
// JSON scalar for a one-column key, a list of scalars for a composite one, null for an open
// end. One rule for every backend: the sim reads the parts as literals of the key's types,
// the odbc backend sends them as text for the server to CAST.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mssql_cdc {

// The parts of a non-null bound, one per key column. `which` names the bound in errors
// ("lo", "hi"). Throws ConfigError when the bound does not fit the key: a list of several
// for a one-column key, a scalar or a list of the wrong length for a composite one, a null
// or nested part.
std::vector<nlohmann::json> KeyBoundParts(const nlohmann::json& bound, std::size_t key_size,
                                          const char* which);

// The end of a grid of `slices` slices of `width` keys from `start` (exclusive). Throws
// ConfigError when width or slices is below 1, or the end passes bigint's range.
std::int64_t SliceGridEnd(std::int64_t start, std::int64_t width, std::int64_t slices);

// A part as the text CAST reads: a number's digits, a boolean as 1 or 0, a string as it is.
std::string KeyPartText(const nlohmann::json& part);

}  // namespace mssql_cdc
