#include "delta/table.h"

#include <arrow/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "core/ascii.h"
#include "core/arrow_status.h"
#include "core/errors.h"
#include "core/time.h"
#include "delta/checkpoint.h"
#include "delta/log_replay.h"
#include "delta/column_mapping.h"
#include "delta/data_file_io.h"
#include "delta/data_file_scan.h"
#include "delta/data_file_stream.h"
#include "delta/data_files.h"
#include "delta/file_stats.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "delta/log_files.h"
#include "delta/protocol.h"
#include "delta/schema.h"
#include "delta/table_commit.h"


namespace mssql_cdc::delta {
namespace {

constexpr std::int64_t kDefaultCheckpointInterval = 10;

}  // namespace

DeltaTable::DeltaTable(std::shared_ptr<storage::FileSystem> fs, std::string uri, TableState snapshot)
    : fs_(std::move(fs)), uri_(std::move(uri)), state_(std::move(snapshot)) {
  root_ = storage::OpenStore(uri_).second;
}

bool DeltaTable::Exists(const std::string& uri) {
  auto [fs, root] = storage::OpenStore(uri);
  for (const auto& entry : fs->List(LogDirectory(root))) {
    if (CommitVersionOf(entry.name) || CheckpointVersionOf(entry.name)) return true;
  }
  return false;
}

DeltaTable DeltaTable::Create(const std::string& uri, const CreateOptions& options) {
  if (!options.schema || options.schema->num_fields() == 0) {
    throw ConfigError("creating Delta table " + uri + " needs a schema with columns");
  }
  auto [fs, root] = storage::OpenStore(uri);
  StringMap properties = WithColumnMappingMode(*options.schema, options.properties, root);
  CheckTableProperties(properties);
  std::unordered_set<std::string> names;
  for (const auto& field : options.schema->fields()) {
    if (!names.insert(AsciiLower(field->name())).second) {
      throw ConfigError("column name '" + field->name() + "' appears twice (Delta column names "
                        "are unique regardless of case)");
    }
  }
  std::shared_ptr<arrow::Schema> mapped = options.schema;
  if (ColumnMappingModeOf(properties, root) == ColumnMappingMode::kName) {
    mapped = MapNewColumns(*options.schema, properties, root);
  }
  std::string schema_string = ToDeltaSchemaString(*mapped);
  auto schema = FromDeltaSchemaString(schema_string, "the new schema");

  auto open_existing = [&]() {
    DeltaTable table = Open(uri);
    auto existing = table.state().schema();
    if (!SameColumns(*existing, *schema)) {
      throw SchemaChangedError("Delta table " + root + " already exists with the columns " +
                               ColumnList(*existing) + "; it cannot be created with " +
                               ColumnList(*schema));
    }
    return table;
  };
  if (Exists(uri)) return open_existing();

  Metadata metadata;
  metadata.id = RandomUuid();
  metadata.name = options.name;
  metadata.description = options.description;
  metadata.schema_string = schema_string;
  metadata.configuration = properties;
  metadata.created_time = NowUnixMillis();
  Protocol protocol = RequiredProtocol(std::nullopt, *schema, properties);

  nlohmann::json properties_json = nlohmann::json::object();
  for (const auto& [key, value] : properties) properties_json[key] = value;
  nlohmann::json parameters = {{"isManaged", "false"},
                               {"description", options.description
                                                   ? nlohmann::json(*options.description)
                                                   : nlohmann::json(nullptr)},
                               {"partitionBy", "[]"},
                               {"properties", properties_json.dump()}};
  CommitInfo info = MakeCommitInfo("CREATE TABLE", parameters, -1, true, {}, 0, AppendOptions{});
  std::vector<Action> actions = {info, protocol, metadata};

  fs->CreateDirectories(LogDirectory(root));
  if (!fs->WriteIfAbsent(CommitPath(root, 0), EncodeCommit(actions))) {
    return open_existing();  // another writer created it first
  }
  TableState snapshot;
  ApplyActions(snapshot, actions, 0);
  return DeltaTable(fs, uri, std::move(snapshot));
}

DeltaTable DeltaTable::Open(const std::string& uri) {
  auto [fs, root] = storage::OpenStore(uri);
  TableState snapshot = ReplayLog(*fs, root);
  return DeltaTable(fs, uri, std::move(snapshot));
}

const std::string& DeltaTable::uri() const { return uri_; }

const TableState& DeltaTable::state() const { return state_; }

const TableState& DeltaTable::Refresh() {
  state_ = ReplayLog(*fs_, root_);
  return state_;
}

const TableState& DeltaTable::CatchUp() {
  for (;;) {
    auto actions = ReadCommit(*fs_, root_, state_.version + 1);
    if (!actions) return state_;
    ApplyActions(state_, *actions, state_.version + 1);
  }
}

std::optional<DeltaTable::TxnCommit> DeltaTable::CommitHoldingTxn(const std::string& app_id) const {
  const auto held = state_.app_versions.find(app_id);
  if (held == state_.app_versions.end()) return std::nullopt;
  for (std::int64_t v = state_.version; v >= 0; --v) {
    auto actions = ReadCommit(*fs_, root_, v);
    if (!actions) return std::nullopt;
    const Txn* txn = nullptr;
    const CommitInfo* info = nullptr;
    for (const auto& action : *actions) {
      if (const auto* t = std::get_if<Txn>(&action); t && t->app_id == app_id) txn = t;
      if (const auto* c = std::get_if<CommitInfo>(&action)) info = c;
    }
    if (txn == nullptr || txn->version != held->second) continue;
    return TxnCommit{v, txn->version, info ? info->user_metadata : std::nullopt};
  }
  return std::nullopt;
}

void DeltaTable::CheckpointIfDue() {
  std::int64_t interval = kDefaultCheckpointInterval;
  if (auto it = state_.metadata.configuration.find("delta.checkpointInterval");
      it != state_.metadata.configuration.end()) {
    try {
      interval = std::max<std::int64_t>(1, std::stoll(it->second));
    } catch (const std::exception&) {
      // A malformed value written by another engine: keep the default.
    }
  }
  if (state_.version <= 0 || state_.version % interval != 0) return;
  try {
    WriteCheckpoint(*fs_, root_, state_);
    state_.last_checkpoint_version = state_.version;
  } catch (const std::exception& e) {
    // The commit stands; readers replay JSON commits without the checkpoint.
    spdlog::warn("Delta table {}: checkpoint of version {} failed: {}", root_, state_.version,
                 e.what());
  }
}

CommitResult DeltaTable::Committed(const std::vector<Action>& actions, std::int64_t version,
                                   const std::vector<AddFile>& adds, std::int64_t rows,
                                   int attempt) {
  ApplyActions(state_, actions, version);
  CheckpointIfDue();
  CommitResult result;
  result.version = version;
  result.written = true;
  result.files = static_cast<std::int64_t>(adds.size());
  result.rows = rows;
  for (const auto& add : adds) result.bytes += add.size;
  result.attempts = attempt;
  return result;
}

std::shared_ptr<arrow::Table> DeltaTable::ReadFiles(const std::vector<AddFile>& files,
                                                    const std::shared_ptr<arrow::Schema>& schema) const {
  return ReadDataFiles(*fs_, root_, files, schema ? schema : state_.schema(), {});
}

std::optional<std::vector<AddFile>> DeltaTable::FilesAddedBy(std::int64_t version) const {
  auto actions = ReadCommit(*fs_, root_, version);
  if (!actions) return std::nullopt;
  std::vector<AddFile> files;
  for (const auto& action : *actions) {
    if (const auto* add = std::get_if<AddFile>(&action)) {
      if (state_.files.count(add->path) == 0) return std::nullopt;  // compacted since
      files.push_back(*add);
    }
  }
  return files;
}

void DeltaTable::ScanFiles(const std::vector<AddFile>& files, const std::vector<std::string>& columns,
                           const std::function<void(const arrow::RecordBatch&)>& visit) const {
  const auto schema = state_.schema();
  arrow::FieldVector fields;
  for (const auto& name : columns) {
    const int i = FieldIndexIgnoringCase(*schema, name);
    fields.push_back(schema->field(i));
  }
  ScanDataFiles(*fs_, root_, files, arrow::schema(std::move(fields)), visit);
}

int DeltaTable::DeleteUnnamedFiles(const std::vector<std::string>& relative_paths) {
  CatchUp();
  int deleted = 0;
  for (const auto& path : relative_paths) {
    if (state_.files.count(path) > 0 || state_.tombstones.count(path) > 0) continue;
    const std::string full = DataFilePath(root_, path);
    if (!fs_->Exists(full)) continue;
    fs_->Delete(full);
    ++deleted;
  }
  if (deleted > 0) {
    spdlog::info("Delta table {}: deleted {} data file(s) that a stopped writer left and no "
                 "commit names", root_, deleted);
  }
  return deleted;
}

std::shared_ptr<arrow::Table> DeltaTable::Read(const std::vector<FilterTerm>& filter) const {
  std::vector<AddFile> files;
  files.reserve(state_.files.size());
  for (const auto& [path, add] : state_.files) files.push_back(add);
  return ReadDataFiles(*fs_, root_, files, state_.schema(), filter);
}

}  // namespace mssql_cdc::delta
