// Silver's position ({"applied_lsn", "snapshot_lsn", "open_snapshot_lsn", "snapshot_wave"}) as
// JSON crosses the Python border, for the silver and reconcile bindings.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/finalization.h"

namespace mssql_cdc::python {

using nlohmann::json;

inline std::optional<std::string> TextAt(const json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  return object[key].get<std::string>();
}

inline std::optional<SilverPosition> PositionOf(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const json object = json::parse(*text);
  if (object.is_null()) return std::nullopt;
  SilverPosition position;
  position.applied_lsn = TextAt(object, "applied_lsn");
  position.snapshot_lsn = TextAt(object, "snapshot_lsn");
  position.open_snapshot_lsn = TextAt(object, "open_snapshot_lsn");
  if (object.contains("snapshot_wave") && !object["snapshot_wave"].is_null()) {
    position.snapshot_wave = object["snapshot_wave"].get<std::int32_t>();
  }
  return position;
}

inline json PositionJson(const SilverPosition& position) {
  json object = {{"applied_lsn", nullptr}, {"snapshot_lsn", nullptr}, {"open_snapshot_lsn", nullptr},
                 {"snapshot_wave", nullptr}};
  if (position.applied_lsn) object["applied_lsn"] = *position.applied_lsn;
  if (position.snapshot_lsn) object["snapshot_lsn"] = *position.snapshot_lsn;
  if (position.open_snapshot_lsn) object["open_snapshot_lsn"] = *position.open_snapshot_lsn;
  if (position.snapshot_wave) object["snapshot_wave"] = *position.snapshot_wave;
  return object;
}

}  // namespace mssql_cdc::python
