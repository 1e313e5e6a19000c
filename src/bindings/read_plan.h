// A snapshot's read plan as Python hands it to format("mssql_cdc_snapshot"):
// {"lsn", "keys", "chunks": [[i, lo, hi], ...]}, the stamp and ranges as the options
// snapshotLsn, snapshotKeys and snapshotChunks take them; "chunks" is empty for a table read
// whole without a key. One spelling for the bootstrap's and snapshot()'s reads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lsn.h"

namespace mssql_cdc::python {

struct PlannedRange {
  nlohmann::json lo, hi;
};

inline nlohmann::json ReadPlanJson(const Lsn& stamp, const std::vector<std::string>& keys,
                                   const std::vector<PlannedRange>& ranges) {
  nlohmann::json chunks = nlohmann::json::array();
  if (!keys.empty()) {
    for (std::size_t i = 0; i < ranges.size(); ++i) chunks.push_back({i, ranges[i].lo, ranges[i].hi});
  }
  return {{"lsn", stamp.ToString()}, {"keys", keys}, {"chunks", chunks}};
}

}  // namespace mssql_cdc::python
