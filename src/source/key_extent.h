// Questions about a source table's key that a few of Source's seeks and grid counts answer: a
// one-column integer or date key's smallest and largest key within bounds, and its rows and key
// sums per bucket of a fixed width; any key's extent as a chunked snapshot records it when it
// opens. mssql_cdc.client asks them as mssql-cdc-pyspark 0.8.0's client does (key_range,
// key_buckets, snapshot_plan); the chunk planner counts its grid the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/source.h"

namespace mssql_cdc {

// (MIN, MAX) of the key among keys with lo <= key < hi (either end open when nullopt), as JSON
// values; (null, null) when there is none.
std::pair<nlohmann::json, nlohmann::json> KeyRangeWithin(Source& source, const KeyQuery& query,
                                                         std::optional<std::int64_t> lo,
                                                         std::optional<std::int64_t> hi);

// Rows and key sums per non-empty bucket among keys with lo <= key < hi, bucket b holding the
// keys in [b * width, (b + 1) * width), a date as its day number since 1970-01-01; in bucket
// order. An open end is the first key, or one past the last. A bucket an end cuts counts only
// the keys inside. ConfigError for a width below 1.
std::vector<SliceCount> KeyBuckets(Source& source, const KeyQuery& query, std::int64_t width,
                                   std::optional<std::int64_t> lo, std::optional<std::int64_t> hi);

// The extent a chunked snapshot is planned from, recorded when it opens, by mssql-cdc-pyspark
// 0.8.0's rule so that either library can plan from it: {"kind": "int", "lo": MIN, "hi": MAX,
// "rows": the table's row estimate} for one key column whose smallest and largest values are
// integers; else {"kind": "keyset", "max": the largest key (a value for one column, a list for
// several), or null when the table is empty or `query` names no key column}.
nlohmann::ordered_json SnapshotExtent(Source& source, const KeyQuery& query);

// An integer key's value, or a date key's day number since 1970-01-01 ("YYYY-MM-DD..."); the
// ConfigError for any other JSON value.
std::int64_t DayNumberOrInteger(const nlohmann::json& key);

}  // namespace mssql_cdc
