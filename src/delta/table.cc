#include "delta/table.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_set>

#include "core/ascii.h"
#include "core/arrow_status.h"
#include "core/errors.h"
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


namespace mssql_cdc::delta {
namespace {

constexpr char kEngineInfo[] = "mssql-cdc/" MSSQL_CDC_VERSION;
constexpr int kMaxCommitAttempts = 1000;
constexpr std::int64_t kDefaultCheckpointInterval = 10;

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

// Data file paths in add actions are relative URIs; the files live at the decoded path.
std::string DataFilePath(const std::string& root, const std::string& uri_path) {
  return JoinPath(root, DataFileRelativePath(uri_path));
}

// Best effort: files no commit names are invisible to readers; removing them saves space.
void DeleteUncommitted(storage::FileSystem& fs, const std::string& root, const std::vector<AddFile>& adds) {
  for (const auto& add : adds) {
    try {
      fs.Delete(DataFilePath(root, add.path));
    } catch (const std::exception& e) {
      spdlog::warn("could not delete uncommitted data file {}: {}", add.path, e.what());
    }
  }
}

// What a write changes besides data: the merged schema, and the metaData and protocol
// actions to commit when they differ from the snapshot's.
struct TableChange {
  std::shared_ptr<arrow::Schema> schema;
  std::optional<Metadata> metadata;
  std::optional<Protocol> protocol;
};

TableChange PlanTableChange(const TableState& snapshot, const arrow::Schema* incoming,
                            bool merge_schema, const std::string& table) {
  TableChange change;
  change.schema = snapshot.schema();
  if (incoming == nullptr) return change;
  SchemaMergeRules rules;
  rules.add_columns = merge_schema;
  rules.type_widening_enabled =
      PropertyIsTrue(snapshot.metadata.configuration, "delta.enableTypeWidening");
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

// What a commit that lost the race learns from one winning commit.
enum class RaceOutcome {
  kRetry,       // nothing in the way: commit again at the next version
  kTxnHeld,     // the winner committed our (app_id, version) or later: ours is redundant
  kRecompute,   // the winner changed files a read-modify-write commit read
  kConflict,    // the winner changed the schema or protocol: fail
};

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
  info.timestamp = NowMs();
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

std::shared_ptr<arrow::Schema> CommonSchema(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  std::shared_ptr<arrow::Schema> schema;
  for (const auto& batch : batches) {
    if (!batch) throw ConfigError("a batch to append is null");
    if (!schema) {
      schema = batch->schema();
    } else if (!schema->Equals(*batch->schema(), /*check_metadata=*/false)) {
      throw ConfigError("the batches to append have different schemas: " + schema->ToString() +
                        " and " + batch->schema()->ToString());
    }
  }
  return schema;
}

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
  metadata.created_time = NowMs();
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

namespace {

// The table version holding `txn`: the oldest commit of the newest run of commits whose txn
// for the app id is at or past txn.version. Commits no longer on disk end the search.
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

}  // namespace

std::unique_ptr<DataFileStream> DeltaTable::Staged::NewFileStream(std::size_t part) const {
  return std::make_unique<DataFileStream>(fs_, root_, schema_, options_.write, part);
}

DeltaTable::Staged DeltaTable::StageAppend(const std::shared_ptr<arrow::Schema>& incoming,
                                           const AppendOptions& options) {
  CheckUserMetadata(options);
  CatchUp();
  CheckCanWrite(state_.protocol, state_.metadata, root_);
  if (!state_.metadata.partition_columns.empty()) {
    throw ConfigError("Delta table " + root_ + " is partitioned, which mssql-cdc does not write");
  }
  Staged staged;
  staged.fs_ = fs_;
  staged.root_ = root_;
  staged.options_ = options;
  staged.read_version_ = state_.version;
  if (options.txn) {
    auto held = state_.app_versions.find(options.txn->app_id);
    if (held != state_.app_versions.end() && held->second >= options.txn->version) {
      staged.held_version_ = VersionHoldingTxn(*fs_, root_, state_.version, *options.txn);
    }
  }
  TableChange change = PlanTableChange(state_, incoming.get(), options.merge_schema, root_);
  staged.schema_ = change.schema;
  staged.metadata_ = std::move(change.metadata);
  staged.protocol_ = std::move(change.protocol);
  return staged;
}

CommitResult DeltaTable::CommitStaged(const Staged& staged, const std::vector<AddFile>& files) {
  CheckUserMetadata(staged.options_);
  std::int64_t rows = 0;
  for (const auto& add : files) {
    const auto stats = add.stats ? ParseFileStats(*add.stats) : std::nullopt;
    if (!stats || !stats->num_records) {
      DeleteUncommitted(*fs_, root_, files);
      throw InternalError("data file " + add.path + " of a staged append has no row count");
    }
    rows += *stats->num_records;
  }
  if (staged.held_version_) {
    DeleteUncommitted(*fs_, root_, files);
    CommitResult result;
    result.version = *staged.held_version_;
    return result;
  }
  if (rows == 0 && !staged.options_.txn) {
    CommitResult result;
    result.version = state_.version;
    return result;
  }
  return CommitAdds(staged, files, rows);
}

CommitResult DeltaTable::Append(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                const AppendOptions& options) {
  const Staged staged = StageAppend(CommonSchema(batches), options);
  CommitResult result;
  if (staged.held_version_) {
    result.version = *staged.held_version_;
    return result;
  }
  std::int64_t rows = 0;
  for (const auto& batch : batches) rows += batch->num_rows();
  if (rows == 0 && !options.txn) {
    result.version = state_.version;
    return result;
  }
  std::vector<std::shared_ptr<arrow::RecordBatch>> aligned;
  for (const auto& batch : batches) {
    if (batch->num_rows() > 0) aligned.push_back(AlignBatchToSchema(*batch, staged.schema_, root_));
  }
  std::vector<AddFile> adds;
  if (rows > 0) adds = WriteDataFiles(*fs_, root_, staged.schema_, aligned, options.write);
  return CommitAdds(staged, adds, rows);
}

std::vector<CommitResult> DeltaTable::AppendGrouped(const std::vector<GroupedPart>& parts,
                                                    const AppendOptions& options) {
  CheckUserMetadata(options);
  {
    std::unordered_set<std::string> apps;
    for (const auto& part : parts) {
      if (part.txn.app_id.empty()) throw ConfigError("a txn needs a non-empty app id");
      if (!apps.insert(part.txn.app_id).second) {
        throw ConfigError("two parts of one grouped append to " + root_ + " have the txn app id '" +
                          part.txn.app_id + "'; a commit holds one txn per app id");
      }
    }
  }
  std::vector<CommitResult> results(parts.size());
  for (int attempt = 1; attempt <= kMaxCommitAttempts; ++attempt) {
    CatchUp();
    CheckCanWrite(state_.protocol, state_.metadata, root_);
    if (!state_.metadata.partition_columns.empty()) {
      throw ConfigError("Delta table " + root_ + " is partitioned, which mssql-cdc does not write");
    }
    // The parts still to write, and their rows.
    std::vector<std::size_t> pending;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    std::vector<Txn> txns;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (results[i].version >= 0) continue;  // held, learned on an earlier attempt
      auto held = state_.app_versions.find(parts[i].txn.app_id);
      if (held != state_.app_versions.end() && held->second >= parts[i].txn.version) {
        results[i].version = VersionHoldingTxn(*fs_, root_, state_.version, parts[i].txn);
        continue;
      }
      pending.push_back(i);
      txns.push_back(parts[i].txn);
      for (const auto& batch : parts[i].batches) batches.push_back(batch);
    }
    if (pending.empty()) return results;

    const Staged staged = StageAppend(CommonSchema(batches), options);
    std::int64_t rows = 0;
    std::vector<std::shared_ptr<arrow::RecordBatch>> aligned;
    for (const auto& batch : batches) {
      if (batch->num_rows() == 0) continue;
      rows += batch->num_rows();
      aligned.push_back(AlignBatchToSchema(*batch, staged.schema_, root_));
    }
    std::vector<AddFile> adds;
    if (rows > 0) adds = WriteDataFiles(*fs_, root_, staged.schema_, aligned, options.write);
    try {
      CommitInfo info = MakeCommitInfo(options.operation, {{"mode", "Append"}, {"partitionBy", "[]"}},
                                       staged.read_version_, !staged.metadata_ && !staged.protocol_,
                                       adds, rows, options);
      std::vector<Action> actions = {info};
      if (staged.protocol_) actions.push_back(*staged.protocol_);
      if (staged.metadata_) actions.push_back(*staged.metadata_);
      for (Txn txn : txns) {
        txn.last_updated = info.timestamp;
        actions.push_back(txn);
      }
      for (const auto& add : adds) actions.push_back(add);
      const std::string contents = EncodeCommit(actions);
      bool replan = false;
      while (!replan) {
        const std::int64_t version = state_.version + 1;
        if (fs_->WriteIfAbsent(CommitPath(root_, version), contents)) {
          const CommitResult committed = Committed(actions, version, adds, rows, attempt);
          for (std::size_t i : pending) {
            results[i] = committed;
            results[i].rows = 0;
            for (const auto& batch : parts[i].batches) results[i].rows += batch->num_rows();
          }
          return results;
        }
        for (;;) {
          const std::int64_t next = state_.version + 1;
          auto winner = ReadCommit(*fs_, root_, next);
          if (!winner) break;
          const RaceOutcome outcome = JudgeWinner(*winner, txns, /*blind_append=*/true);
          if (outcome == RaceOutcome::kConflict) {
            throw ConcurrentModificationError(
                "Delta table " + root_ + ": version " + std::to_string(next) +
                ", committed concurrently, changed the table's schema, properties or protocol "
                "after this append read version " + std::to_string(staged.read_version_) +
                "; nothing was committed, run the append again");
          }
          ApplyActions(state_, *winner, next);
          if (outcome == RaceOutcome::kTxnHeld) replan = true;  // without the held parts
        }
      }
      DeleteUncommitted(*fs_, root_, adds);
    } catch (...) {
      DeleteUncommitted(*fs_, root_, adds);
      throw;
    }
  }
  throw ConcurrentModificationError("Delta table " + root_ + ": gave up after " +
                                    std::to_string(kMaxCommitAttempts) +
                                    " lost commit races; nothing was committed");
}

CommitResult DeltaTable::CommitAdds(const Staged& staged, const std::vector<AddFile>& adds,
                                    std::int64_t rows) {
  const AppendOptions& options = staged.options_;
  CommitResult result;
  try {
    const std::int64_t read_version = staged.read_version_;
    const bool blind = !staged.metadata_ && !staged.protocol_;
    CommitInfo info =
        MakeCommitInfo(options.operation, {{"mode", "Append"}, {"partitionBy", "[]"}},
                       read_version, blind, adds, rows, options);
    std::vector<Action> actions = {info};
    if (staged.protocol_) actions.push_back(*staged.protocol_);
    if (staged.metadata_) actions.push_back(*staged.metadata_);
    if (options.txn) {
      Txn txn = *options.txn;
      txn.last_updated = info.timestamp;
      actions.push_back(txn);
    }
    for (const auto& add : adds) actions.push_back(add);
    std::string contents = EncodeCommit(actions);

    for (int attempt = 1; attempt <= kMaxCommitAttempts; ++attempt) {
      std::int64_t version = state_.version + 1;
      if (fs_->WriteIfAbsent(CommitPath(root_, version), contents)) {
        return Committed(actions, version, adds, rows, attempt);
      }
      // Lost the race for `version`: learn what the winners did before trying the next one.
      for (;;) {
        std::int64_t next = state_.version + 1;
        auto winner = ReadCommit(*fs_, root_, next);
        if (!winner) break;
        switch (JudgeWinner(*winner, TxnsOf(options), /*blind_append=*/true)) {
          case RaceOutcome::kConflict:
            throw ConcurrentModificationError(
                "Delta table " + root_ + ": version " + std::to_string(next) +
                ", committed concurrently, changed the table's schema, properties or protocol "
                "after this append read version " + std::to_string(read_version) +
                "; nothing was committed, run the append again");
          case RaceOutcome::kTxnHeld:
            DeleteUncommitted(*fs_, root_, adds);
            ApplyActions(state_, *winner, next);
            result.version = next;
            result.attempts = attempt;
            return result;
          case RaceOutcome::kRetry:
          case RaceOutcome::kRecompute:
            break;
        }
        ApplyActions(state_, *winner, next);
      }
    }
    throw ConcurrentModificationError("Delta table " + root_ + ": gave up after " +
                                      std::to_string(kMaxCommitAttempts) +
                                      " lost commit races; nothing was committed");
  } catch (...) {
    DeleteUncommitted(*fs_, root_, adds);
    throw;
  }
}

CommitResult DeltaTable::UpsertByKey(const std::string& key_column,
                                     const std::shared_ptr<arrow::Table>& rows,
                                     const AppendOptions& options) {
  return UpsertByKey(key_column, rows, options, UpsertCondition{});
}

CommitResult DeltaTable::UpsertByKey(const std::string& key_column,
                                     const std::shared_ptr<arrow::Table>& rows,
                                     const AppendOptions& options,
                                     const UpsertCondition& should_write) {
  if (!rows) throw ConfigError("UpsertByKey needs rows");
  int key_index = rows->schema()->GetFieldIndex(key_column);
  if (key_index < 0) {
    throw ConfigError("the rows to upsert into " + root_ + " lack the key column '" +
                      key_column + "'");
  }
  auto combined_rows = rows->CombineChunks();
  CheckInternal(combined_rows.status(), "combining upsert rows");
  auto unique_keys = arrow::compute::Unique((*combined_rows)->column(key_index));
  CheckInternal(unique_keys.status(), "finding upsert keys");
  if ((*unique_keys)->length() != rows->num_rows()) {
    throw ConfigError("the rows to upsert into " + root_ + " repeat a value of key column '" +
                      key_column + "'; give each key once");
  }
  AppendOptions rewrite_options = options;
  if (rewrite_options.operation == "WRITE") rewrite_options.operation = "MERGE";

  // Every file goes; the new contents are the current rows whose key is not upserted, then
  // the upserted rows.
  auto plan = [&](const TableState& snapshot, const std::shared_ptr<arrow::Schema>& schema) {
    Rewrite rewrite;
    // The table's spelling of the key column (names match regardless of case).
    std::string key_name = schema->field(FieldIndexIgnoringCase(*schema, key_column))->name();
    rewrite.predicate = key_name + " matches upserted keys";
    for (const auto& [path, add] : snapshot.files) rewrite.remove.push_back(add);
    auto current = ReadDataFiles(*fs_, root_, rewrite.remove, schema, {});
    auto upserted = AlignBatchToSchema(**(*combined_rows)->CombineChunksToBatch(), schema, root_);
    std::shared_ptr<arrow::Table> current_with_keys = current->Slice(0, 0);
    if (current->num_rows() > 0) {
      auto current_keys = current->GetColumnByName(key_name);
      arrow::compute::SetLookupOptions lookup(upserted->GetColumnByName(key_name));
      auto replaced = arrow::compute::IsIn(current_keys, lookup);
      CheckInternal(replaced.status(), "matching upsert keys");
      if (should_write) {
        auto matching = arrow::compute::Filter(current, *replaced);
        CheckInternal(matching.status(), "finding the current rows of the upserted keys");
        current_with_keys = matching->table();
      }
      auto kept_mask = arrow::compute::Invert(*replaced);
      CheckInternal(kept_mask.status(), "matching upsert keys");
      auto kept = arrow::compute::Filter(current, *kept_mask);
      CheckInternal(kept.status(), "keeping rows");
      auto kept_batch = kept->table()->CombineChunksToBatch();
      CheckInternal(kept_batch.status(), "keeping rows");
      if ((*kept_batch)->num_rows() > 0) rewrite.rows.push_back(*kept_batch);
    }
    // Decided on this attempt's snapshot, so a condition that held on a snapshot a concurrent
    // writer has since replaced is checked again after the lost race.
    if (should_write && !should_write(current_with_keys)) {
      rewrite.commit = false;
      return rewrite;
    }
    if (upserted->num_rows() > 0) rewrite.rows.push_back(upserted);
    return rewrite;
  };
  return RewriteFiles(rows->schema(), plan, rewrite_options);
}

void DeltaTable::Rewrite::AddPart(const arrow::Table& table) {
  arrow::TableBatchReader reader(table);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    const auto status = reader.ReadNext(&batch);
    if (!status.ok()) throw InternalError("reading rows to rewrite: " + status.ToString());
    if (!batch) break;
    batches.push_back(std::move(batch));
  }
  parts.push_back(std::move(batches));
}

CommitResult DeltaTable::RewriteFiles(const std::shared_ptr<arrow::Schema>& incoming,
                                      const RewritePlanner& plan, const AppendOptions& options) {
  CheckUserMetadata(options);
  CommitResult result;
  for (int attempt = 1; attempt <= kMaxCommitAttempts; ++attempt) {
    CatchUp();
    CheckCanWrite(state_.protocol, state_.metadata, root_);
    if (!state_.metadata.partition_columns.empty()) {
      throw ConfigError("Delta table " + root_ + " is partitioned, which mssql-cdc does not write");
    }
    if (PropertyIsTrue(state_.metadata.configuration, "delta.appendOnly")) {
      throw ConfigError("Delta table " + root_ + " is append-only (delta.appendOnly=true); "
                        "a " + options.operation + " would remove files");
    }
    if (options.txn) {
      auto held = state_.app_versions.find(options.txn->app_id);
      if (held != state_.app_versions.end() && held->second >= options.txn->version) {
        result.version = VersionHoldingTxn(*fs_, root_, state_.version, *options.txn);
        result.attempts = attempt;
        return result;
      }
    }

    TableChange change = PlanTableChange(state_, incoming.get(), options.merge_schema, root_);
    Rewrite rewrite = plan(state_, change.schema);
    if (!rewrite.commit) {
      result.version = state_.version;
      result.attempts = attempt;
      return result;
    }
    std::int64_t total_rows = 0;
    for (const auto& batch : rewrite.rows) total_rows += batch->num_rows();

    std::vector<AddFile> adds;
    try {
      if (total_rows > 0) adds = WriteDataFiles(*fs_, root_, change.schema, rewrite.rows, options.write);
      // Each part on a thread of its own, a few at once: a rewrite of several files costs the
      // slowest one's write, not their sum.
      std::vector<std::vector<AddFile>> written(rewrite.parts.size());
      std::vector<std::exception_ptr> failed(rewrite.parts.size());
      const std::size_t at_once = std::max(1u, std::thread::hardware_concurrency());
      for (std::size_t first = 0; first < rewrite.parts.size(); first += at_once) {
        std::vector<std::thread> writers;
        for (std::size_t p = first; p < std::min(rewrite.parts.size(), first + at_once); ++p) {
          for (const auto& batch : rewrite.parts[p]) total_rows += batch->num_rows();
          writers.emplace_back([&, p] {
            try {
              written[p] = WriteDataFiles(*fs_, root_, change.schema, rewrite.parts[p], options.write);
            } catch (...) {
              failed[p] = std::current_exception();
            }
          });
        }
        for (auto& writer : writers) writer.join();
      }
      for (auto& files : written) {
        for (auto& add : files) adds.push_back(std::move(add));
      }
      for (const auto& error : failed) {
        if (error) std::rethrow_exception(error);
      }
    } catch (...) {
      DeleteUncommitted(*fs_, root_, adds);
      throw;
    }
    try {
      std::int64_t now = NowMs();
      CommitInfo info = MakeCommitInfo(
          options.operation, {{"predicate", nlohmann::json::array({rewrite.predicate}).dump()}},
          state_.version, /*blind_append=*/false, adds, total_rows, options);
      info.operation_metrics["numRemovedFiles"] = std::to_string(rewrite.remove.size());
      std::vector<Action> actions = {info};
      if (change.protocol) actions.push_back(*change.protocol);
      if (change.metadata) actions.push_back(*change.metadata);
      if (options.txn) {
        Txn txn = *options.txn;
        txn.last_updated = now;
        actions.push_back(txn);
      }
      for (auto& add : adds) add.data_change = rewrite.data_change;
      for (const auto& old : rewrite.remove) {
        RemoveFile remove;
        remove.data_change = rewrite.data_change;
        remove.path = old.path;
        remove.deletion_timestamp = now;
        remove.partition_values = old.partition_values;
        remove.size = old.size;
        actions.push_back(remove);
      }
      for (const auto& add : adds) actions.push_back(add);

      // A rewrite that changes no rows (compaction) stays valid while the winners of the races
      // it loses only add files or remove others: it is committed again as written, so that it
      // is not starved by a stream appending more often than the rewrite takes.
      bool still_valid = !rewrite.data_change && !change.protocol && !change.metadata;
      std::unordered_set<std::string> removing;
      for (const auto& old : rewrite.remove) removing.insert(old.path);
      for (;;) {
        const std::int64_t version = state_.version + 1;
        if (fs_->WriteIfAbsent(CommitPath(root_, version), EncodeCommit(actions))) {
          auto committed = Committed(actions, version, adds, total_rows, attempt);
          committed.files_removed = static_cast<std::int64_t>(rewrite.remove.size());
          return committed;
        }
        // Lost the race: unless every winner left this rewrite's files alone, it is recomputed
        // on the new snapshot, or given up when a winner makes that impossible or unnecessary.
        for (;;) {
          std::int64_t next = state_.version + 1;
          auto winner = ReadCommit(*fs_, root_, next);
          if (!winner) break;
          auto outcome = JudgeWinner(*winner, TxnsOf(options), /*blind_append=*/false);
          if (outcome == RaceOutcome::kConflict) {
            throw ConcurrentModificationError(
                "Delta table " + root_ + ": version " + std::to_string(next) +
                ", committed concurrently, changed the table's schema, properties or protocol "
                "while this " + options.operation + " was computed; nothing was committed, run it again");
          }
          for (const auto& action : *winner) {
            const auto* removed = std::get_if<RemoveFile>(&action);
            if (removed && removing.count(removed->path) > 0) still_valid = false;
          }
          ApplyActions(state_, *winner, next);
          if (outcome == RaceOutcome::kTxnHeld) {
            DeleteUncommitted(*fs_, root_, adds);
            result.version = next;
            result.attempts = attempt;
            return result;
          }
        }
        if (!still_valid || ++attempt > kMaxCommitAttempts) break;
      }
      DeleteUncommitted(*fs_, root_, adds);
      adds.clear();
    } catch (...) {
      DeleteUncommitted(*fs_, root_, adds);
      throw;
    }
  }
  throw ConcurrentModificationError("Delta table " + root_ + ": " + options.operation +
                                    " gave up after " + std::to_string(kMaxCommitAttempts) +
                                    " lost commit races; nothing was committed");
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
