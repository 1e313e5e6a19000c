// Questions about a one-column integer or date key that a few of Source's seeks and grid counts
// answer: its smallest and largest key within bounds, and its rows and key sums per bucket of a
// fixed width. mssql_cdc.client asks them as mssql-cdc-pyspark 0.8.0's client does
// (key_range, key_buckets); the chunk planner counts its grid the same way.
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

// An integer key's value, or a date key's day number since 1970-01-01 ("YYYY-MM-DD..."); the
// ConfigError for any other JSON value.
std::int64_t DayNumberOrInteger(const nlohmann::json& key);

}  // namespace mssql_cdc
