// DeltaTable's appends: staged (files written as rows arrive, committed at the end), whole,
// and grouped (several txns in one commit).
#include <arrow/api.h>

#include <unordered_set>

#include "core/errors.h"
#include "delta/data_file_stream.h"
#include "delta/data_files.h"
#include "delta/file_stats.h"
#include "delta/log_files.h"
#include "delta/protocol.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "delta/table_commit.h"

namespace mssql_cdc::delta {
namespace {

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

}  // namespace mssql_cdc::delta
