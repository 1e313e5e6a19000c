#include "source/key_extent.h"

#include <algorithm>

#include "core/errors.h"
#include "core/time.h"

namespace mssql_cdc {
namespace {

// A one-column key as KeyAt and LastKey give it: the scalar (a list of one when listed).
nlohmann::json Scalar(const std::optional<nlohmann::json>& key) {
  if (!key) return nullptr;
  return key->is_array() && key->size() == 1 ? (*key)[0] : *key;
}

std::int64_t FloorMod(std::int64_t a, std::int64_t b) { return a - FloorDiv(a, b) * b; }

}  // namespace

std::int64_t DayNumberOrInteger(const nlohmann::json& key) {
  if (key.is_number_integer()) return key.get<std::int64_t>();
  if (key.is_string()) {
    const std::string text = key.get<std::string>();
    if (const auto micros = ParseDateTime(text.substr(0, 10))) return FloorDiv(*micros, kMicrosPerDay);
  }
  throw ConfigError("key value " + key.dump() + " is neither an integer nor a date");
}

std::pair<nlohmann::json, nlohmann::json> KeyRangeWithin(Source& source, const KeyQuery& query,
                                                         std::optional<std::int64_t> lo,
                                                         std::optional<std::int64_t> hi) {
  const nlohmann::json first = Scalar(source.KeyAt(query, lo ? nlohmann::json(*lo) : nlohmann::json(nullptr), 0));
  if (first.is_null() || (hi && DayNumberOrInteger(first) >= *hi)) return {nullptr, nullptr};
  if (!hi) return {first, Scalar(source.LastKey(query))};
  const std::int64_t from = DayNumberOrInteger(first);
  std::int64_t rows = 0;
  for (const auto& slice : source.CountKeySlices(query, from, *hi - from, 1)) rows += slice.rows;
  return {first, Scalar(source.KeyAt(query, first, rows - 1))};
}

std::vector<SliceCount> KeyBuckets(Source& source, const KeyQuery& query, std::int64_t width,
                                   std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
  if (width < 1) throw ConfigError("width is a positive number of keys, not " + std::to_string(width));
  if (!lo || !hi) {
    const nlohmann::json first = Scalar(source.KeyAt(query, nullptr, 0));
    if (first.is_null()) return {};
    if (!lo) lo = DayNumberOrInteger(first);
    if (!hi) hi = DayNumberOrInteger(Scalar(source.LastKey(query))) + 1;
  }
  if (*hi <= *lo) return {};
  const std::int64_t first_bucket = FloorDiv(*lo, width);
  const std::int64_t slices = FloorDiv(*hi - 1, width) - first_bucket + 1;
  std::vector<SliceCount> buckets;
  for (SliceCount slice : source.CountKeySlices(query, first_bucket * width, width, slices)) {
    slice.slice += first_bucket;
    // A bucket an end cuts: the keys inside the ends only.
    const std::int64_t from = std::max(*lo, slice.slice * width);
    const std::int64_t to = std::min(*hi, (slice.slice + 1) * width);
    if (FloorMod(*lo, width) != 0 || FloorMod(*hi, width) != 0) {
      if (from != slice.slice * width || to != (slice.slice + 1) * width) {
        const auto counted = source.CountKeySlices(query, from, to - from, 1);
        if (counted.empty()) continue;
        slice.rows = counted[0].rows;
        slice.key_sum = counted[0].key_sum;
      }
    }
    buckets.push_back(slice);
  }
  return buckets;
}

nlohmann::ordered_json SnapshotExtent(Source& source, const KeyQuery& query) {
  if (query.key_columns.size() == 1) {
    const auto [lo, hi] = KeyRangeWithin(source, query, std::nullopt, std::nullopt);
    if (lo.is_number_integer() && hi.is_number_integer()) {
      return {{"kind", "int"}, {"lo", lo}, {"hi", hi},
              {"rows", source.RowEstimate(source.ResolveCaptureInstance(query.capture_instance).name)}};
    }
  }
  nlohmann::json top = query.key_columns.empty() ? nlohmann::json(nullptr) : Scalar(source.LastKey(query));
  return {{"kind", "keyset"}, {"max", top}};
}

}  // namespace mssql_cdc
