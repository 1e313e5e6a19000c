#include "snapshot/range_plan.h"

#include <algorithm>

#include "core/errors.h"
#include "snapshot/snapshot_key.h"

namespace mssql_cdc {
namespace {

RangePlan Whole(std::string why) {
  RangePlan plan;
  plan.ranges.push_back(KeyRange{});
  plan.why_whole = std::move(why);
  return plan;
}

}  // namespace

std::vector<KeyRange> UniformRanges(std::int64_t min, std::int64_t max, int count) {
  if (count < 1) throw InternalError("uniform ranges: count " + std::to_string(count));
  // The number of key values, in 128 bits: MAX - MIN + 1 of a bigint key may not fit 64.
  using Wide = unsigned __int128;
  const Wide values =
      max < min ? 1 : Wide(static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min)) + 1;
  if (values < static_cast<Wide>(count)) count = static_cast<int>(values);
  std::vector<KeyRange> ranges;
  nlohmann::json lo = nullptr;
  for (int i = 1; i < count; ++i) {
    const auto bound = static_cast<std::int64_t>(static_cast<std::uint64_t>(min) +
                                                 static_cast<std::uint64_t>(values * i / count));
    ranges.push_back(KeyRange{lo, bound});
    lo = bound;
  }
  ranges.push_back(KeyRange{lo, nullptr});
  return ranges;
}

RangePlan PlanSnapshotRanges(const RangePlanRequest& request, Source& source) {
  const auto& ci = request.instance;
  const SnapshotKey key = ResolveSnapshotKey(ci, request.columns, request.key_columns);
  if (key.columns.empty()) return Whole(key.why_not);
  if (request.ranges <= 1) return Whole("numPartitions is 1");

  const std::int64_t rows = source.RowEstimate(ci.name);
  const std::int64_t min_rows = std::max<std::int64_t>(1, request.min_range_rows);
  const int count = static_cast<int>(
      std::min<std::int64_t>(request.ranges, std::max<std::int64_t>(1, rows / min_rows)));
  if (count <= 1) {
    return Whole("the table holds about " + std::to_string(rows) + " rows, fewer than " +
                 std::to_string(2 * min_rows) + " for two ranges");
  }
  const KeyQuery query{ci.name, key.columns};
  RangePlan plan;
  plan.key_columns = key.columns;
  if (key.integer()) {
    const auto first = source.KeyAt(query, nullptr, 0);
    const auto last = source.LastKey(query);
    if (!first || !last) return Whole("the table is empty");
    plan.kind = RangeKind::kUniform;
    plan.ranges = UniformRanges(first->get<std::int64_t>(), last->get<std::int64_t>(), count);
    return plan;
  }
  // Keyset seeks: each bound `step` keys past the previous one, so ranges of about equal rows
  // whatever the keys' spread.
  plan.kind = RangeKind::kKeyset;
  const std::int64_t step = (rows + count - 1) / count;
  nlohmann::json lo = nullptr;
  for (int i = 1; i < count; ++i) {
    auto bound = source.KeyAt(query, lo, step);
    if (!bound) break;  // fewer rows than the estimate: the last range takes the rest
    plan.ranges.push_back(KeyRange{lo, *bound});
    lo = std::move(*bound);
  }
  plan.ranges.push_back(KeyRange{lo, nullptr});
  return plan;
}

}  // namespace mssql_cdc
