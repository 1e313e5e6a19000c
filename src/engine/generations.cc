#include "engine/generations.h"

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "engine/checkpoint_directory.h"
#include "source/source.h"

namespace mssql_cdc {
namespace {

constexpr char kStateFile[] = "_mssql_cdc_generation.json";

nlohmann::json TimeJson(const std::optional<UtcMicros>& t) {
  return t ? nlohmann::json(FormatIsoMillis(t->value)) : nlohmann::json(nullptr);
}

std::optional<UtcMicros> TimeOf(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key) || doc[key].is_null()) return std::nullopt;
  const auto micros = ParseDateTime(doc[key].get<std::string>());
  if (!micros) throw ConfigError(std::string("generation state: '") + key + "' is not a time");
  return UtcMicros{*micros};
}

}  // namespace

std::optional<GenerationState> GenerationState::Read(const std::string& base) {
  const std::optional<std::string> text = CheckpointDirectory(base).Read(kStateFile);
  if (!text) return std::nullopt;
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc.contains("generation") || !doc["generation"].is_number_integer()) {
    throw ConfigError("checkpoint " + base + ": " + kStateFile + " is damaged (it is written "
                      "whole, so it was edited by hand); restore it, or start over with a new "
                      "checkpoint and app_id");
  }
  GenerationState state;
  state.generation = doc["generation"].get<int>();
  if (doc.contains("snapshot_lsn") && doc["snapshot_lsn"].is_string()) {
    state.snapshot = Offset{Lsn::ParseLenient(doc["snapshot_lsn"].get<std::string>()), TimeOf(doc, "commit_ts")};
  }
  state.at = TimeOf(doc, "at");
  if (doc.contains("recovering") && doc["recovering"].is_string()) {
    state.recovering = Lsn::ParseLenient(doc["recovering"].get<std::string>());
  }
  state.failed_at = TimeOf(doc, "failed_at");
  return state;
}

void GenerationState::Write(const std::string& base) const {
  nlohmann::json doc = {{"generation", generation},
                        {"snapshot_lsn", snapshot ? nlohmann::json(snapshot->lsn.ToString()) : nlohmann::json(nullptr)},
                        {"commit_ts", TimeJson(snapshot ? snapshot->commit_ts : std::nullopt)},
                        {"at", TimeJson(at)}};
  if (recovering) doc["recovering"] = recovering->ToString();
  if (failed_at) doc["failed_at"] = FormatIsoMillis(failed_at->value);
  CheckpointDirectory(base).Write(kStateFile, doc.dump() + "\n");
}

std::string GenerationCheckpoint(const std::string& base, int generation) {
  if (generation == 0) return base;
  std::string root = base;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root + "/_generations/" + std::to_string(generation);
}

std::string GenerationAppId(const std::string& app_id, int generation) {
  return generation == 0 ? app_id : app_id + ".g" + std::to_string(generation);
}

std::optional<LossFound> FindLoss(Source& source, const SourceClock& clock,
                                  const std::string& capture_instance, const Offset& last_processed) {
  const auto max_lsn = source.MaxLsn();
  if (!max_lsn || *max_lsn <= last_processed.lsn) return std::nullopt;
  Retention retention = ReadRetention(source, clock, capture_instance);
  if (!Purged(retention, last_processed.lsn.Increment())) return std::nullopt;
  return LossFound{last_processed, std::move(retention)};
}

void CheckResnapshotInterval(const GenerationState& state, UtcMicros now, double interval_days,
                             const std::string& capture_instance, const LossFound& loss) {
  std::optional<UtcMicros> last = state.at;
  std::string what = "re-snapshot";
  if (state.failed_at && (!last || state.failed_at->value > last->value)) {
    last = state.failed_at;
    what = "failed re-snapshot";
  }
  if (!last) return;
  const double days = static_cast<double>(now.value - last->value) / kMicrosPerDay;
  if (days >= interval_days) return;
  throw DataLossError(
      "capture instance '" + capture_instance + "': CDC cleanup purged the changes after LSN " +
      loss.last_processed.lsn.ToString() + " (they resume at " + loss.retention.min_lsn.ToString() +
      "), and the last automatic " + what + " was " + FormatIsoMillis(last->value) +
      " UTC, within resnapshot_interval_days=" + std::to_string(interval_days) +
      ": a second loss this soon means retention is shorter than the stream's pauses. Lengthen "
      "CDC retention or run the stream more often, then rerun with resnapshot_interval_days=0 "
      "to re-snapshot now");
}

}  // namespace mssql_cdc
