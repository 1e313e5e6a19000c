// A bootstrap request made a re-snapshot from the pre-flight's JSON (resnapshot_preflight:
// {generation, lost_from_ts, lost_to_ts, ...}), for the bindings that take one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/facts_events.h"
#include "core/time.h"
#include "feed/change_feed.h"

namespace mssql_cdc::python {

inline void SetResnapshot(FeedBootstrapRequest& request, const std::string& preflight_json) {
  const auto doc = nlohmann::json::parse(preflight_json);
  SnapshotCause& cause = request.cause;
  cause.kind = facts_event::kResnapshot;
  cause.generation = doc.at("generation").get<int>();
  for (auto [key, into] : {std::pair{"lost_from_ts", &cause.lost_from_ts},
                           std::pair{"lost_to_ts", &cause.lost_to_ts}}) {
    if (!doc.contains(key) || !doc[key].is_string()) continue;
    if (auto micros = ParseDateTime(doc[key].get<std::string>())) *into = UtcMicros{*micros};
  }
}

}  // namespace mssql_cdc::python
