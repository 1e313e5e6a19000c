#include "core/stream_params.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/option_words.h"
#include "core/table_ref.h"
#include "core/user_text.h"

namespace mssql_cdc {

// ---------------------------------------------------------------------------------------------
// StreamParams

std::string_view OnDataLossName(OnDataLoss value) {
  return value == OnDataLoss::kResnapshot ? "resnapshot" : "fail";
}

std::string_view SnapshotModeName(SnapshotMode mode) {
  return mode == SnapshotMode::kChunked ? "chunked" : "full";
}

OnDataLoss ParseOnDataLoss(std::string_view text) {
  if (text == "fail") return OnDataLoss::kFail;
  if (text == "resnapshot") return OnDataLoss::kResnapshot;
  throw ConfigError(
      fmt::format("on_data_loss must be \"fail\" or \"resnapshot\", got {}", QuoteUserText(text)));
}

SnapshotMode ParseSnapshotMode(std::string_view text) {
  if (text == "full") return SnapshotMode::kFull;
  if (text == "chunked") return SnapshotMode::kChunked;
  throw ConfigError(
      fmt::format("snapshot must be \"full\" or \"chunked\", got {}", QuoteUserText(text)));
}

namespace {

bool ParamBool(std::string_view name, const std::string& value) {
  if (auto b = ParseBoolWord(value)) return *b;
  throw ConfigError(fmt::format(
      "{} must be a boolean, got {}: give true/1/yes/y or false/0/no/n (any case)", name,
      QuoteUserText(value)));
}

bool IsUnderDbfs(std::string_view path) {
  return path == "/dbfs" || path.starts_with("/dbfs/");
}

}  // namespace

bool IsStreamParamName(std::string_view name) {
  const std::string lower = AsciiLower(name);
  return std::find(kStreamParamNames.begin(), kStreamParamNames.end(), lower) !=
         kStreamParamNames.end();
}

StreamParams StreamParams::Parse(const Options& params) {
  for (const auto& [name, value] : params.entries()) {
    if (!IsStreamParamName(name)) {
      throw ConfigError(fmt::format("unknown to_delta parameter {}: accepted are {}",
                                    QuoteUserText(name), JoinNames(kStreamParamNames)));
    }
  }
  StreamParams p;
  p.target = params.Get("target").value_or("");
  p.app_id = params.Get("app_id").value_or("");
  p.checkpoint = params.Get("checkpoint").value_or("");
  if (auto v = params.Get("facts_table")) {
    if (TrimAsciiSpace(*v).empty()) {
      throw ConfigError("to_delta parameter facts_table is empty: give the facts table, a name or "
                        "a path, or leave it out for none");
    }
    p.facts_table = *v;
  }
  if (auto v = params.Get("trigger")) p.trigger = Trigger::Parse(*v);
  if (auto v = params.Get("query_name"); v && !v->empty()) p.query_name = *v;
  if (auto v = params.Get("bootstrap")) p.bootstrap = ParamBool("bootstrap", *v);
  if (auto v = params.Get("on_data_loss")) p.on_data_loss = ParseOnDataLoss(TrimAsciiSpace(*v));
  if (auto v = params.Get("resnapshot_interval_days")) {
    std::string_view text = TrimAsciiSpace(*v);
    double days = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), days);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      throw ConfigError(fmt::format(
          "resnapshot_interval_days must be a number of days, 0 or more, got {}", QuoteUserText(*v)));
    }
    p.resnapshot_interval_days = days;
  }
  if (auto v = params.Get("snapshot_on_switch")) {
    p.snapshot_on_switch = ParamBool("snapshot_on_switch", *v);
  }
  if (auto v = params.Get("snapshot")) p.snapshot = ParseSnapshotMode(TrimAsciiSpace(*v));
  p.Validate();
  return p;
}

void StreamParams::Validate() const {
  auto require = [](std::string_view name, const std::string& value, std::string_view what) {
    if (TrimAsciiSpace(value).empty()) {
      throw ConfigError(fmt::format("to_delta parameter {} is required: give {}", name, what));
    }
  };
  require("target", target, "the bronze Delta table, a name or a path");
  require("app_id", app_id,
          "a stable identity for this stream's writes, e.g. dbo_orders-v1 (a new checkpoint "
          "needs a new app_id)");
  require("checkpoint", checkpoint, "the directory the stream keeps its progress in");
  if (!std::isfinite(resnapshot_interval_days) || resnapshot_interval_days < 0) {
    throw ConfigError(fmt::format(
        "resnapshot_interval_days must be a number of days, 0 or more, got {}",
        resnapshot_interval_days));
  }
  if (snapshot == SnapshotMode::kChunked && !facts_table) {
    throw ConfigError(
        "snapshot=\"chunked\" needs facts_table: give a facts table, or use snapshot=\"full\"");
  }
  if (snapshot_on_switch && snapshot == SnapshotMode::kChunked) {
    throw ConfigError(
        "snapshot_on_switch=True cannot be combined with snapshot=\"chunked\": use "
        "snapshot=\"full\", or turn snapshot_on_switch off");
  }
  if (on_data_loss == OnDataLoss::kResnapshot) {
    if (!facts_table) {
      throw ConfigError(
          "on_data_loss=\"resnapshot\" needs facts_table: give a facts table, where "
          "re-snapshots are recorded");
    }
  }
}

void ValidateSparkStreamConfig(const SourceOptions& source, const StreamParams& params) {
  ValidateStreamConfig(source, params);
  const std::string& checkpoint = params.checkpoint;
  if (params.on_data_loss == OnDataLoss::kResnapshot &&
      (IsUri(checkpoint) || IsUnderDbfs(checkpoint))) {
    throw ConfigError(fmt::format(
        "on_data_loss=\"resnapshot\" needs a local or Volume checkpoint path, got {}: URIs "
        "and paths under /dbfs/ resolve differently for the engine and Spark",
        QuoteUserText(checkpoint)));
  }
}

void ValidateStreamConfig(const SourceOptions& source, const StreamParams& params) {
  params.Validate();
  if (params.snapshot_on_switch && IsUri(params.checkpoint) && !source.metrics_path) {
    throw ConfigError(fmt::format(
        "snapshot_on_switch=True with checkpoint URI {} needs the metricsPath option: give "
        "metricsPath, or use a local checkpoint path",
        QuoteUserText(params.checkpoint)));
  }
  if (params.on_data_loss == OnDataLoss::kResnapshot && !source.fail_on_data_loss) {
    throw ConfigError(
        "on_data_loss=\"resnapshot\" cannot be combined with failOnDataLoss=false: remove "
        "failOnDataLoss (re-snapshots need the data-loss check), or use on_data_loss=\"fail\"");
  }
  if (params.bootstrap && source.starting_lsn) {
    throw ConfigError(fmt::format(
        "bootstrap=True cannot be combined with startingLsn {}: a bootstrap starts at its "
        "snapshot's LSN; remove one of them",
        QuoteUserText(source.starting_lsn->ToString())));
  }
}

}  // namespace mssql_cdc
