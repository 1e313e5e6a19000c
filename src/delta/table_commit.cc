#include "delta/table_commit.h"

#include <arrow/type.h>
#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"
#include "delta/column_mapping.h"
#include "delta/data_file_io.h"
#include "delta/data_files.h"
#include "delta/log_files.h"
#include "delta/protocol.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {
namespace {

constexpr char kEngineInfo[] = "mssql-cdc/" MSSQL_CDC_VERSION;

}  // namespace


int FieldIndexIgnoringCase(const arrow::Schema& schema, const std::string& name) {
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (AsciiLower(schema.field(i)->name()) == AsciiLower(name)) return i;
  }
  throw InternalError("column '" + name + "' is missing from " + schema.ToString());
}

bool PropertyIsTrue(const StringMap& configuration, const std::string& key) {
  auto it = configuration.find(key);
  return it != configuration.end() && AsciiLower(it->second) == "true";
}

std::string DataFilePath(const std::string& root, const std::string& uri_path) {
  return JoinPath(root, DataFileRelativePath(uri_path));
}

void DeleteUncommitted(storage::FileSystem& fs, const std::string& root, const std::vector<AddFile>& adds) {
  for (const auto& add : adds) {
    try {
      fs.Delete(DataFilePath(root, add.path));
    } catch (const std::exception& e) {
      spdlog::warn("could not delete uncommitted data file {}: {}", add.path, e.what());
    }
  }
}

TableChange PlanTableChange(const TableState& snapshot, const arrow::Schema* incoming,
                            bool merge_schema, const std::string& table) {
  TableChange change;
  change.schema = snapshot.schema();
  if (incoming == nullptr) return change;
  SchemaMergeRules rules;
  rules.add_columns = merge_schema;
  rules.type_widening_enabled = TypeWideningEnabled(snapshot.metadata.configuration);
  rules.table = table;
  auto merged = MergeSchemas(*change.schema, *incoming, rules);
  change.schema = merged.schema;
  if (merged.changed) {
    Metadata metadata = snapshot.metadata;
    change.schema = MapNewColumns(*merged.schema, metadata.configuration, table);
    metadata.schema_string = ToDeltaSchemaString(*change.schema);
    change.metadata = std::move(metadata);
  }
  Protocol protocol =
      RequiredProtocol(snapshot.protocol, *change.schema, snapshot.metadata.configuration);
  if (!(protocol == snapshot.protocol)) change.protocol = protocol;
  return change;
}

RaceOutcome JudgeWinner(const std::vector<Action>& winner, const std::vector<Txn>& ours,
                        bool blind_append) {
  RaceOutcome outcome = RaceOutcome::kRetry;
  for (const auto& action : winner) {
    if (std::holds_alternative<Metadata>(action) || std::holds_alternative<Protocol>(action)) {
      return RaceOutcome::kConflict;
    }
    if (const auto* txn = std::get_if<Txn>(&action)) {
      for (const auto& mine : ours) {
        if (txn->app_id == mine.app_id && txn->version >= mine.version) outcome = RaceOutcome::kTxnHeld;
      }
    }
    if (!blind_append && outcome == RaceOutcome::kRetry &&
        (std::holds_alternative<AddFile>(action) || std::holds_alternative<RemoveFile>(action))) {
      outcome = RaceOutcome::kRecompute;
    }
  }
  return outcome;
}

std::vector<Txn> TxnsOf(const AppendOptions& options) {
  if (options.txn) return {*options.txn};
  return {};
}

CommitInfo MakeCommitInfo(const std::string& operation, nlohmann::json parameters,
                          std::int64_t read_version, bool blind_append,
                          const std::vector<AddFile>& adds, std::int64_t rows,
                          const AppendOptions& options) {
  CommitInfo info;
  info.timestamp = NowUnixMillis();
  info.operation = operation;
  info.operation_parameters = std::move(parameters);
  if (read_version >= 0) info.read_version = read_version;
  info.is_blind_append = blind_append;
  std::int64_t bytes = 0;
  for (const auto& add : adds) bytes += add.size;
  // Spark writes operation metrics as strings.
  info.operation_metrics = {{"numFiles", std::to_string(adds.size())},
                            {"numOutputRows", std::to_string(rows)},
                            {"numOutputBytes", std::to_string(bytes)}};
  info.user_metadata = options.user_metadata;
  info.engine_info = kEngineInfo;
  return info;
}

void CheckUserMetadata(const AppendOptions& options) {
  if (options.user_metadata &&
      nlohmann::json::parse(*options.user_metadata, nullptr, false).is_discarded()) {
    throw ConfigError("userMetadata must be JSON text; got: " + *options.user_metadata);
  }
  if (options.txn && options.txn->app_id.empty()) {
    throw ConfigError("a txn needs a non-empty app id");
  }
}

std::int64_t VersionHoldingTxn(storage::FileSystem& fs, const std::string& root, std::int64_t newest,
                               const Txn& txn) {
  std::int64_t holding = newest;
  for (std::int64_t v = newest; v >= 0; --v) {
    auto actions = ReadCommit(fs, root, v);
    if (!actions) break;
    for (const auto& action : *actions) {
      const auto* t = std::get_if<Txn>(&action);
      if (t == nullptr || t->app_id != txn.app_id) continue;
      if (t->version < txn.version) return holding;
      holding = v;
    }
  }
  return holding;
}

}  // namespace mssql_cdc::delta
