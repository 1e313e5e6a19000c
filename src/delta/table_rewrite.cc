// DeltaTable's rewrites: commits that remove files and add others (upserts by key, compaction,
// file rewrites), recomputed when a concurrent commit touched what they read.
#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <thread>
#include <unordered_set>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "core/time.h"
#include "delta/compute_kernels.h"
#include "delta/data_file_stream.h"
#include "delta/data_files.h"
#include "delta/log_files.h"
#include "delta/protocol.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "delta/table_commit.h"

namespace mssql_cdc::delta {

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
  EnsureComputeKernels();
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
      if (rewrite.stream_rows) {
        DataFileStream stream(fs_, root_, change.schema, options.write, rewrite.parts.size() + 1);
        rewrite.stream_rows(stream);
        total_rows += stream.rows();
        for (auto& add : stream.Finish()) adds.push_back(std::move(add));
      }
    } catch (...) {
      DeleteUncommitted(*fs_, root_, adds);
      throw;
    }
    try {
      std::int64_t now = NowUnixMillis();
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

}  // namespace mssql_cdc::delta
