#include "core/facts_events.h"
#include "snapshot/chunked_state.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

nlohmann::json Detail(const SnapshotEvent& event) {
  if (!event.detail) return nlohmann::json::object();
  auto parsed = nlohmann::json::parse(*event.detail, nullptr, false);
  return parsed.is_object() ? parsed : nlohmann::json::object();
}

// The stream's own app id or one of its generations' (<app_id>.g<n>).
bool OfStream(const std::string& row_app_id, const std::string& app_id) {
  if (row_app_id == app_id) return true;
  const std::string prefix = app_id + ".g";
  if (row_app_id.rfind(prefix, 0) != 0 || row_app_id.size() == prefix.size()) return false;
  return std::all_of(row_app_id.begin() + prefix.size(), row_app_id.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool Closes(const SnapshotEvent& event, const OpenedSnapshot& opened) {
  if (!facts_event::CompletesSnapshot(event.event)) return false;
  if (event.app_id != opened.app_id || !event.max_lsn) return false;
  return Lsn::ParseLenient(*event.max_lsn) >= opened.snapshot;
}

std::string ModeName(bool chunked) { return chunked ? "chunked" : "full"; }

}  // namespace

std::set<int> ChunkedProgress::done() const {
  std::set<int> out;
  for (const auto& c : chunks) out.insert(c.chunk);
  return out;
}

std::int64_t ChunkedProgress::rows() const {
  std::int64_t total = 0;
  for (const auto& c : chunks) total += c.rows;
  return total;
}

std::int64_t ChunkedProgress::last_wave() const {
  std::int64_t wave = -1;
  for (const auto& c : chunks) wave = std::max(wave, c.wave);
  return wave;
}

std::optional<double> ChunkedProgress::seconds_per_round(int partitions) const {
  const std::int64_t wave = last_wave();
  if (wave < 0 || partitions < 1) return std::nullopt;
  int chunks = 0;
  std::optional<std::int64_t> wave_ms;
  for (const auto& c : this->chunks) {
    if (c.wave != wave) continue;
    ++chunks;
    if (c.wave_ms) wave_ms = c.wave_ms;
  }
  if (!wave_ms) return std::nullopt;
  const int rounds = (chunks + partitions - 1) / partitions;
  return static_cast<double>(*wave_ms) / 1000.0 / std::max(1, rounds);
}

std::optional<ChunkedProgress::Pace> ChunkedProgress::pace() const {
  std::optional<std::int64_t> first, last;
  for (const auto& c : chunks) {
    if (c.started_at && (!first || c.started_at->value < *first)) first = c.started_at->value;
    if (c.written_at && (!last || c.written_at->value > *last)) last = c.written_at->value;
  }
  if (!first || !last || *last <= *first) return std::nullopt;
  const double seconds = static_cast<double>(*last - *first) / 1e6;
  Pace pace;
  pace.rows_per_second = static_cast<double>(rows()) / seconds;
  const auto read = static_cast<double>(done().size());
  if (planned && read > 0) pace.seconds_left = seconds / read * std::max(0.0, chunks_total - read);
  return pace;
}

std::vector<OpenedSnapshot> SnapshotsOpened(const std::vector<SnapshotEvent>& events,
                                            const std::string& app_id) {
  std::vector<OpenedSnapshot> opened;
  for (const auto& event : events) {
    if (event.event != facts_event::kSnapshotOpen || !OfStream(event.app_id, app_id) || !event.max_lsn) continue;
    const auto detail = Detail(event);
    OpenedSnapshot s;
    s.chunked = detail.value("mode", std::string("full")) == "chunked";
    s.snapshot = Lsn::ParseLenient(*event.max_lsn);
    s.kind = detail.value("kind", std::string(facts_event::kBootstrap));
    s.generation = detail.value("generation", 0);
    s.app_id = event.app_id;
    const auto plan = detail.find("plan");
    if (plan != detail.end() && plan->is_object() &&
        plan->value("rows", nlohmann::json()).is_number_integer()) {
      s.rows_estimate = (*plan)["rows"].get<std::int64_t>();
    }
    for (auto [key, into] : {std::pair{"lost_from_ts", &s.lost_from_ts}, std::pair{"lost_to_ts", &s.lost_to_ts}}) {
      if (!detail.contains(key) || !detail[key].is_string()) continue;
      if (auto micros = ParseDateTime(detail[key].get<std::string>())) *into = UtcMicros{*micros};
    }
    opened.push_back(s);
  }
  std::sort(opened.begin(), opened.end(), [](const auto& a, const auto& b) {
    return std::tie(a.generation, a.snapshot) < std::tie(b.generation, b.snapshot);
  });
  for (auto& s : opened) {
    s.complete = std::any_of(events.begin(), events.end(),
                             [&](const SnapshotEvent& e) { return Closes(e, s); });
  }
  return opened;
}

std::optional<ChunkedProgress> NewestChunked(const std::vector<SnapshotEvent>& events,
                                             const std::string& app_id) {
  std::optional<ChunkedProgress> progress;
  for (const auto& s : SnapshotsOpened(events, app_id)) {
    if (!s.chunked) continue;
    progress = ChunkedProgress{};
    progress->opened = s;
  }
  if (!progress) return progress;
  const std::string snapshot = progress->opened.snapshot.ToString();
  std::set<int> seen;
  for (const auto& event : events) {
    if (event.app_id != progress->opened.app_id) continue;
    const auto detail = Detail(event);
    if (detail.value("snapshot", std::string()) != snapshot) continue;
    if (event.event == facts_event::kSnapshotPlan) {
      progress->planned = true;
      // 0.8.0's row counts the chunks in chunk_count and has no digest.
      const auto count = detail.contains("chunk_count") ? detail["chunk_count"] : detail.value("chunks", nlohmann::json());
      progress->chunks_total = count.is_number_integer() ? count.get<int>() : 0;
      progress->plan_digest = detail.value("digest", std::string());
    } else if (event.event == facts_event::kSnapshotChunk) {
      ChunkRecord record;
      record.chunk = detail.value("chunk", -1);
      record.wave = detail.value("wave", std::int64_t{0});
      record.rows = event.rows.value_or(0);
      record.last = detail.value("last", false);
      record.wave_ms = event.duration_ms;
      record.started_at = event.started_at;
      record.written_at = event.written_at;
      record.stamp = event.min_lsn.value_or("");
      // A wave's rows written twice by two racing calls are one chunk read.
      if (record.chunk >= 0 && seen.insert(record.chunk).second) progress->chunks.push_back(record);
    }
  }
  std::sort(progress->chunks.begin(), progress->chunks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.wave, a.chunk) < std::tie(b.wave, b.chunk);
  });
  return progress;
}

std::optional<OpenedSnapshot> OpenSnapshotIn(const std::vector<SnapshotEvent>& events,
                                             const std::string& app_id, SnapshotMode mode,
                                             const std::optional<Lsn>& min_lsn) {
  std::optional<OpenedSnapshot> open;
  for (const auto& s : SnapshotsOpened(events, app_id)) {
    if (s.complete || s.chunked != (mode == SnapshotMode::kChunked)) continue;
    if (!s.chunked && min_lsn && *min_lsn > s.snapshot) continue;  // can never complete
    open = s;
  }
  return open;
}

void CheckModeLock(const std::vector<SnapshotEvent>& events, const std::string& app_id,
                   SnapshotMode starting, const std::string& what,
                   const std::optional<Lsn>& min_lsn) {
  const SnapshotMode other = starting == SnapshotMode::kFull ? SnapshotMode::kChunked
                                                                  : SnapshotMode::kFull;
  const auto open = OpenSnapshotIn(events, app_id, other, min_lsn);
  if (!open) return;
  const bool chunked = open->chunked;
  throw ConfigError(
      what + ": stream '" + app_id + "' has an open " + ModeName(chunked) + " snapshot at LSN " +
      open->snapshot.ToString() + " (generation " + std::to_string(open->generation) +
      "); one mode per run: " +
      (chunked ? "finish it with backfill() (or mssql-cdc run) until it is done, then start again"
               : "rerun to_delta with snapshot=\"full\" so that it completes, then start again"));
}

std::vector<int> NextWaveChunks(int chunks_total, const std::set<int>& done, int count) {
  std::vector<int> wave;
  for (int i = 0; i < chunks_total && static_cast<int>(wave.size()) < count; ++i) {
    if (!done.count(i)) wave.push_back(i);
  }
  return wave;
}

int RoundsForWave(std::optional<double> seconds_per_round, double target_seconds,
                  std::optional<double> seconds_left) {
  if (!seconds_per_round || *seconds_per_round <= 0 || target_seconds <= 0) return 1;
  double budget = target_seconds;
  if (seconds_left) budget = std::min(budget, *seconds_left);
  return std::max(1, static_cast<int>(std::floor(budget / *seconds_per_round)));
}

}  // namespace mssql_cdc
