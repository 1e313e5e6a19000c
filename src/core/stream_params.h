// The parameters of to_delta, typed and validated once, alone and with the source options they
// run with: the rules both modes check before anything is written.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "core/options.h"
#include "core/source_options.h"
#include "core/trigger.h"

namespace mssql_cdc {

// The parameters of to_delta, as its keywords are spelt.
inline constexpr std::array<std::string_view, 11> kStreamParamNames = {
    "target",    "app_id",       "checkpoint",   "facts_table",
    "trigger",   "query_name",   "bootstrap",    "on_data_loss",
    "resnapshot_interval_days", "snapshot_on_switch", "snapshot",
};
// Whether `name` (any case) is one of kStreamParamNames.
bool IsStreamParamName(std::string_view name);

enum class OnDataLoss { kFail, kResnapshot };
enum class SnapshotMode { kFull, kChunked };
std::string_view OnDataLossName(OnDataLoss value);    // "fail", "resnapshot"
std::string_view SnapshotModeName(SnapshotMode mode);  // "full", "chunked"
// Exact words, as the reference's literals: "fail" | "resnapshot", "full" | "chunked".
OnDataLoss ParseOnDataLoss(std::string_view text);
SnapshotMode ParseSnapshotMode(std::string_view text);

// The parameters of to_delta (docs/reference/options.md).
struct StreamParams {
  std::string target;      // bronze table: a name, or a path when it has '/' or ':'
  std::string app_id;      // sink identity, stable for the checkpoint's life
  std::string checkpoint;  // checkpoint location
  std::optional<std::string> facts_table;
  Trigger trigger;
  std::optional<std::string> query_name;  // empty: the sink id
  bool bootstrap = false;
  OnDataLoss on_data_loss = OnDataLoss::kFail;
  double resnapshot_interval_days = 7.0;
  bool snapshot_on_switch = false;
  SnapshotMode snapshot = SnapshotMode::kFull;

  // From string values named like to_delta's keywords (any case): target, app_id,
  // checkpoint, facts_table, trigger (as Trigger::Parse), query_name, bootstrap,
  // on_data_loss, resnapshot_interval_days, snapshot_on_switch, snapshot. An unknown name
  // is a ConfigError. Calls Validate().
  static StreamParams Parse(const Options& params);

  // The rules that need no source options, in the reference's order: required values,
  // resnapshot_interval_days >= 0, chunked needs facts_table, snapshot_on_switch excludes
  // chunked, resnapshot needs a local checkpoint and a facts table.
  void Validate() const;
};

// Validates a stream's parameters together with its source options: StreamParams::Validate,
// then snapshot_on_switch with a URI checkpoint needs metricsPath, resnapshot needs
// failOnDataLoss true, and bootstrap excludes startingLsn.
void ValidateStreamConfig(const SourceOptions& source, const StreamParams& params);
// ValidateStreamConfig and what Spark mode asks beyond it: a re-snapshotting stream's
// checkpoint is read by Spark and by the engine, so it must be a path both resolve alike (a
// local or Volume path; a native stream's may be any URI its store opens).
void ValidateSparkStreamConfig(const SourceOptions& source, const StreamParams& params);

}  // namespace mssql_cdc
