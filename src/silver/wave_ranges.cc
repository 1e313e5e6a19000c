#include "silver/wave_ranges.h"

#include <arrow/api.h>

#include <algorithm>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"

namespace mssql_cdc {
namespace {

// Whether a time text's fraction has a non-zero digit past the sixth: a tick below a microsecond.
bool HasSubMicroTicks(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos) return false;
  for (std::size_t i = dot + 1 + 6; i < text.size(); ++i) {
    if (text[i] != '0') return true;
  }
  return false;
}

// A bound in the key's units; `upper` says which end it is (it decides how a datetime2(7) tick
// rounds). nullopt: it does not read as the key's type.
std::optional<std::int64_t> BoundValue(const nlohmann::json& bound, KeyUnit unit, bool upper) {
  if (unit == KeyUnit::kInteger) {
    if (!bound.is_number_integer()) return std::nullopt;
    return bound.get<std::int64_t>();
  }
  if (!bound.is_string()) return std::nullopt;
  const std::string text = bound.get<std::string>();
  if (unit == KeyUnit::kDay) return ParseDateDays(text);
  const auto micros = ParseDateTime(text);
  if (!micros) return std::nullopt;
  // ParseDateTime truncates to microseconds: right for an exclusive upper end, one short for a
  // lower end that falls between two microseconds.
  return !upper && HasSubMicroTicks(text) ? *micros + 1 : *micros;
}

}  // namespace

const WaveRange* WaveRanges::RangeOf(std::int64_t value) const {
  // The last range whose lo is at or below the value (an open lo is below every value).
  auto after = std::upper_bound(ranges.begin(), ranges.end(), value, [](std::int64_t v, const WaveRange& r) {
    return r.lo && v < *r.lo;
  });
  if (after == ranges.begin()) return nullptr;
  const WaveRange& range = *std::prev(after);
  if (range.lo && value < *range.lo) return nullptr;
  if (range.hi && value >= *range.hi) return nullptr;
  return &range;
}

bool WaveRanges::Meets(std::int64_t min, std::int64_t max) const {
  for (const auto& range : ranges) {
    if ((!range.lo || max >= *range.lo) && (!range.hi || min < *range.hi)) return true;
  }
  return false;
}

bool WavesMayDeleteByRange(const SilverApplyPlan& plan) {
  return !plan.rebuild && plan.open_snapshot_lsn && !plan.wave_chunks.empty();
}

std::optional<WaveRanges> WaveRangesOf(const SilverApplyPlan& plan, const ChunkPlan& chunks,
                                       const std::vector<std::string>& keys, const arrow::Schema& bronze) {
  if (!WavesMayDeleteByRange(plan)) return std::nullopt;
  if (keys.size() != 1 || chunks.keys.size() != 1 || !EqualsIgnoringAsciiCase(keys[0], chunks.keys[0])) {
    return std::nullopt;
  }
  const auto field = bronze.GetFieldByName(keys[0]);
  if (!field) return std::nullopt;
  const auto unit = KeyUnitOf(*field->type());
  if (!unit || (*unit == KeyUnit::kInteger) != (chunks.kind == "int")) return std::nullopt;

  WaveRanges ranges{keys[0], *unit, *plan.open_snapshot_lsn, {}};
  for (int index : plan.wave_chunks) {
    const auto stamp = plan.wave_stamps.find(index);
    if (stamp == plan.wave_stamps.end() || index < 0 || index >= static_cast<int>(chunks.chunks.size())) {
      return std::nullopt;
    }
    const Chunk& chunk = chunks.chunks[static_cast<std::size_t>(index)];
    WaveRange range{index, std::nullopt, std::nullopt, stamp->second};
    if (!chunk.lo.is_null() && !(range.lo = BoundValue(chunk.lo, *unit, false))) return std::nullopt;
    if (!chunk.hi.is_null() && !(range.hi = BoundValue(chunk.hi, *unit, true))) return std::nullopt;
    if (range.lo && range.hi && *range.lo >= *range.hi) continue;  // no whole microsecond inside
    ranges.ranges.push_back(std::move(range));
  }
  std::sort(ranges.ranges.begin(), ranges.ranges.end(), [](const WaveRange& a, const WaveRange& b) {
    if (!a.lo || !b.lo) return !a.lo && b.lo;
    return *a.lo < *b.lo;
  });
  if (ranges.ranges.empty()) return std::nullopt;
  return ranges;
}

}  // namespace mssql_cdc
