// Re-snapshot generations on Spark (engine/generations.h): the pre-flight of
// to_delta(on_data_loss="resnapshot") decided in the engine; Python reads Spark's checkpoint
// for the last processed offset and takes the snapshot through the session.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/timezone.h"
#include "delta/table.h"
#include "feed/change_feed.h"
#include "engine/batch_agreement.h"
#include "engine/generations.h"
#include "bindings/source_options.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

nlohmann::json TimeJson(const std::optional<UtcMicros>& t) {
  return t ? nlohmann::json(FormatIsoMillis(t->value)) : nlohmann::json(nullptr);
}

// {"generation", "checkpoint", "app_id", "snapshot_lsn"} of generation n under `base`.
nlohmann::json GenerationJson(const std::string& base, const std::string& app_id, const GenerationState& state) {
  return {{"generation", state.generation},
          {"checkpoint", GenerationCheckpoint(base, state.generation)},
          {"app_id", GenerationAppId(app_id, state.generation)},
          {"snapshot_lsn", state.snapshot ? nlohmann::json(state.snapshot->lsn.ToString()) : nlohmann::json(nullptr)}};
}

}  // namespace

void BindGenerations(nb::module_& m) {
  m.def("validate_stream",
        [](nb::handle options, const std::map<std::string, std::string>& params) {
          const SourceOptions source = ParseSourceOptions(options);
          std::vector<Options::Entry> entries(params.begin(), params.end());
          ValidateSparkStreamConfig(source, StreamParams::Parse(Options(std::move(entries))));
        },
        nb::arg("options"), nb::arg("params"),
        "ConfigError when to_delta's parameters (as text, named as its keywords) do not hold "
        "with the source options, by the rules a native stream checks and Spark mode's own.");
  m.def("offset_json", [](const std::string& text) { return Offset::FromJson(text).ToJson(); },
        nb::arg("text"),
        "The offset `text` holds, as this release writes it; ConfigError saying what an offset "
        "is when `text` is not one.");
  m.def("check_fresh_start",
        [](nb::handle options, const std::string& bronze_location, const std::string& app_id,
           const std::string& shown) {
          const SourceOptions parsed = ParseSourceOptions(options);
          if (parsed.starting_position().kind != StartingLsn::Kind::kEarliest) return;
          nb::gil_scoped_release release;
          if (!delta::DeltaTable::Exists(bronze_location)) return;
          CheckFreshStartOnBronze(delta::DeltaTable::Open(bronze_location).state().app_versions, app_id, shown);
        },
        nb::arg("options"), nb::arg("bronze_location"), nb::arg("app_id"), nb::arg("shown"),
        "For a stream with no committed batch and no bootstrap: ConfigError when it starts from "
        "the earliest change (its options' startingLsn) and bronze (at `bronze_location`, named "
        "`shown`) holds micro-batches of streams other than `app_id`.");
  m.def("current_generation",
        [](const std::string& base, const std::string& app_id) {
          return GenerationJson(base, app_id, GenerationState::Read(base).value_or(GenerationState{})).dump();
        },
        nb::arg("base"), nb::arg("app_id"),
        "The stream's generation under checkpoint `base`: JSON {generation, checkpoint, app_id, "
        "snapshot_lsn}.");
  m.def("resnapshot_preflight",
        [](nb::handle options, const std::string& base, const std::string& app_id,
           const std::string& last_offset_json, double interval_days) -> std::optional<std::string> {
          SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          const Offset last = Offset::FromJson(last_offset_json);
          ChangeFeed feed(std::move(parsed));
          const auto loss = feed.FindLoss(last);
          if (!loss) return std::nullopt;
          GenerationState state = GenerationState::Read(base).value_or(GenerationState{});
          CheckResnapshotInterval(state, NowUtc(), interval_days, feed.instance().name, *loss);
          state.recovering = last.lsn;
          state.Write(base);
          GenerationState next;
          next.generation = state.generation + 1;
          auto out = GenerationJson(base, app_id, next);
          out["lost_from_ts"] = TimeJson(last.commit_ts);
          out["lost_to_ts"] = TimeJson(loss->retention.watermark_ts);
          out["last_lsn"] = last.lsn.ToString();
          out["min_lsn"] = loss->retention.min_lsn.ToString();
          return out.dump();
        },
        nb::arg("options"), nb::arg("base"), nb::arg("app_id"), nb::arg("last_offset_json"),
        nb::arg("interval_days"),
        "The pre-flight of on_data_loss=\"resnapshot\": None when the changes after the last "
        "processed offset are there; else (the `recovering` state written) the next generation "
        "as JSON {generation, checkpoint, app_id, lost_from_ts, lost_to_ts, last_lsn, min_lsn}. "
        "DataLossError when the last re-snapshot or failed attempt is within interval_days.");
  m.def("resnapshot_done",
        [](const std::string& base, int generation, const std::string& offset_json) {
          GenerationState state;
          state.generation = generation;
          state.snapshot = Offset::FromJson(offset_json);
          state.at = NowUtc();
          state.Write(base);
        },
        nb::arg("base"), nb::arg("generation"), nb::arg("offset_json"),
        "Commits a recovery: generation `generation` starts at the snapshot offset.");
  m.def("resnapshot_failed",
        [](const std::string& base) {
          GenerationState state = GenerationState::Read(base).value_or(GenerationState{});
          state.failed_at = NowUtc();
          state.Write(base);
        },
        nb::arg("base"), "Records a failed re-snapshot, which counts against the interval.");
}

}  // namespace mssql_cdc::python
