#include "source/key_bounds.h"

#include "core/errors.h"

namespace mssql_cdc {

std::vector<nlohmann::json> KeyBoundParts(const nlohmann::json& bound, std::size_t key_size,
                                          const char* which) {
  std::vector<nlohmann::json> parts;
  if (key_size == 1 && !bound.is_array()) {
    parts = {bound};
  } else if (key_size == 1 && bound.size() != 1) {
    throw ConfigError(std::string("snapshot bound ") + which + " " + bound.dump() +
                      " is a list, but the key has one column: give a scalar");
  } else if (!bound.is_array() || bound.size() != key_size) {
    throw ConfigError(std::string("snapshot bound ") + which + " " + bound.dump() +
                      " does not fit a key of " + std::to_string(key_size) +
                      " columns: give a list of " + std::to_string(key_size) + " values");
  } else {
    // A one-element list is what a caller holding keys as lists gives for one column.
    parts.assign(bound.begin(), bound.end());
  }
  for (const auto& part : parts) {
    if (!part.is_primitive() || part.is_null()) {
      throw ConfigError(std::string("snapshot bound ") + which + " " + bound.dump() +
                        " has a part that is not a scalar value (null parts are not allowed; "
                        "use null for the whole bound)");
    }
  }
  return parts;
}

std::string KeyPartText(const nlohmann::json& part) {
  if (part.is_string()) return part.get<std::string>();
  if (part.is_boolean()) return part.get<bool>() ? "1" : "0";
  return part.dump();
}

std::int64_t SliceGridEnd(std::int64_t start, std::int64_t width, std::int64_t slices) {
  if (width < 1 || slices < 1) {
    throw ConfigError("a grid of key slices needs a width and a count of at least 1, got width " +
                      std::to_string(width) + " and " + std::to_string(slices) + " slices");
  }
  const __int128 end = static_cast<__int128>(start) + static_cast<__int128>(width) * slices;
  if (end > INT64_MAX) {
    throw ConfigError("a grid of " + std::to_string(slices) + " key slices of " +
                      std::to_string(width) + " from " + std::to_string(start) +
                      " ends past bigint's range");
  }
  return static_cast<std::int64_t>(end);
}

}  // namespace mssql_cdc
