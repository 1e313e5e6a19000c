// A snapshot found in bronze as the Python tables objects answer find_snapshot(instances):
// (lsn, chunked) or None. One reading for the bootstrap's and the backfill's tables.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot_finder.h"

namespace mssql_cdc::python {

// Calls tables.find_snapshot(instances); the caller holds the GIL.
inline std::optional<FoundSnapshot> FindSnapshotThrough(const nanobind::object& tables,
                                                        const std::vector<std::string>& instances) {
  namespace nb = nanobind;
  nb::object found = tables.attr("find_snapshot")(instances);
  if (found.is_none()) return std::nullopt;
  auto [lsn, chunked] = nb::cast<std::pair<std::string, bool>>(found);
  FoundSnapshot snapshot;
  snapshot.offset.lsn = Lsn::ParseLenient(lsn);
  snapshot.chunked = chunked;
  return snapshot;
}

}  // namespace mssql_cdc::python
