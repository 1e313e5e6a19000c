// Facts rows of snapshot events as Python passes them: a JSON list of objects with event,
// app_id, min_lsn, max_lsn, rows, duration_ms and detail (python/mssql_cdc/backfill.py).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "snapshot/chunked_state.h"

namespace mssql_cdc::python {

inline std::vector<SnapshotEvent> EventsOfJson(const std::string& text) {
  std::vector<SnapshotEvent> events;
  for (const auto& row : nlohmann::json::parse(text)) {
    SnapshotEvent e;
    auto text_of = [&](const char* key) -> std::optional<std::string> {
      if (!row.contains(key) || row[key].is_null()) return std::nullopt;
      return row[key].get<std::string>();
    };
    auto int_of = [&](const char* key) -> std::optional<std::int64_t> {
      if (!row.contains(key) || row[key].is_null()) return std::nullopt;
      return row[key].get<std::int64_t>();
    };
    e.event = text_of("event").value_or("");
    e.app_id = text_of("app_id").value_or("");
    e.min_lsn = text_of("min_lsn");
    e.max_lsn = text_of("max_lsn");
    e.rows = int_of("rows");
    e.duration_ms = int_of("duration_ms");
    e.detail = text_of("detail");
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace mssql_cdc::python
