#include "engine/bootstrap.h"

#include <arrow/api.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/timezone.h"
#include "delta/table.h"
#include "engine/batch_reader.h"
#include "engine/facts.h"
#include "engine/staged_files.h"
#include "engine/stream_checkpoint.h"
#include "snapshot/snapshot_finder.h"
#include "snapshot/snapshot_stamp.h"
#include "core/arrow_status.h"

namespace mssql_cdc {
bool DeltaBootstrapTables::HoldsSnapshot(const delta::Txn& txn, const Lsn&) {
  auto held = bronze_.Refresh().app_versions.find(txn.app_id);
  if (held == bronze_.state().app_versions.end() || held->second < txn.version) return false;
  delta::AppendOptions held_options;
  held_options.txn = txn;
  version_ = bronze_.Append({}, held_options).version;
  return true;
}

bool DeltaBootstrapTables::AppendSnapshot(
    ParallelSnapshot& rows, const delta::Txn& txn, const std::string& user_metadata,
    const std::function<void(const std::string&)>& on_file) {
  delta::AppendOptions options;
  options.txn = txn;
  options.user_metadata = user_metadata;
  options.write = write_;
  options.write.on_file = on_file;
  const auto staged = bronze_.StageAppend(rows.schema(), options);
  std::vector<delta::AddFile> files;
  if (!staged.held_version()) {
    files = rows.WriteInto([&](std::size_t range) { return staged.NewFileStream(range); });
  }
  auto commit = bronze_.CommitStaged(staged, files);
  version_ = commit.version;
  return commit.written;
}

std::optional<FoundSnapshot> DeltaBootstrapTables::FindSnapshot(
    const std::vector<std::string>& instances) {
  bronze_.Refresh();
  return mssql_cdc::FindSnapshot(bronze_, instances);
}

std::int64_t DeltaBootstrapTables::SnapshotRows(const Lsn& lsn) {
  std::int64_t rows = 0;
  const std::string stamp = lsn.ToString();
  bronze_.ScanFiles(SnapshotFiles(), {"_snapshot"}, [&](const arrow::RecordBatch& batch) {
    const auto& values = static_cast<const arrow::StringArray&>(*batch.column(0));
    for (std::int64_t i = 0; i < values.length(); ++i) {
      if (!values.IsNull(i) && values.GetView(i) == stamp) ++rows;
    }
  });
  return rows;
}

std::vector<delta::AddFile> DeltaBootstrapTables::SnapshotFiles() const {
  // The snapshot's own commit when known and still in the log; else every file.
  if (version_ >= 0) {
    if (auto files = bronze_.FilesAddedBy(version_)) return *files;
  }
  std::vector<delta::AddFile> files;
  for (const auto& [path, add] : bronze_.state().files) files.push_back(add);
  return files;
}

void DeltaBootstrapTables::AppendFacts(const std::shared_ptr<arrow::RecordBatch>& row,
                                       const delta::Txn& txn) {
  facts_->Append({row}, txn);
}

namespace {

void AppendBootstrapFacts(const BootstrapRequest& request, BootstrapTables& tables,
                          const Offset& offset, std::int64_t rows, UtcMicros started_at,
                          std::chrono::steady_clock::time_point started) {
  if (!tables.has_facts()) return;
  const auto duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  const SnapshotSubject& subject = request.subject;
  const SnapshotCause& cause = request.cause;
  FactsRow row = BootstrapFactsRow(subject.app_id, subject.target, offset, rows, started_at,
                                   duration.count());
  row.event = cause.kind;
  row.lost_from_ts = cause.lost_from_ts;
  row.lost_to_ts = cause.lost_to_ts;
  tables.AppendFacts(FactsToRecordBatch({row}),
                     delta::Txn{EventsTxnAppId(subject.app_id), cause.generation, std::nullopt});
}

}  // namespace

std::string SnapshotTxnAppId(const std::string& app_id) { return app_id + "#snapshot"; }
std::string EventsTxnAppId(const std::string& app_id) { return app_id + "#events"; }
std::string OpenTxnAppId(const std::string& app_id) { return app_id + "#open"; }

ParallelSnapshot WholeSnapshotReader(ParallelSnapshotRequest read, Source& source, SourcePool& sources,
                                     const std::shared_ptr<arrow::Schema>& bronze_schema) {
  const std::string stamp = read.snapshot_lsn.ToString();
  return ParallelSnapshot(std::move(read), source, sources,
                          {bronze_schema, [bronze_schema, stamp](const auto& batch, std::size_t) {
                             return AlignToBronze(batch, bronze_schema, std::nullopt, stamp);
                           }});
}

nlohmann::json WholeSnapshotMetadata(const std::string& capture_instance, const Offset& stamp) {
  return {{"snapshot", capture_instance},
          {"lsn", stamp.lsn.ToString()},
          {"commit_ts", stamp.commit_ts ? FormatIsoMillis(stamp.commit_ts->value) : std::string()}};
}

BootstrapResult RunBootstrap(const BootstrapRequest& request, Source& source, SourcePool& sources,
                             const SourceClock& clock, StreamCheckpoint& checkpoint,
                             BootstrapTables& tables) {
  BootstrapResult result;
  auto state = checkpoint.ReadSnapshot();
  if (state && state->done) {
    result.offset = state->offset;
    result.rows = state->rows;
    return result;
  }
  const SnapshotSubject& subject = request.subject;
  const std::string& ci = subject.instance.name;
  const UtcMicros started_at = NowUtc();
  const auto started = std::chrono::steady_clock::now();
  if (!state) {
    auto found =
        request.cause.is_resnapshot() ? std::nullopt : tables.FindSnapshot(subject.instances);
    if (found) {
      // Bronze holds a snapshot of the table already (a seed, a snapshot() call, a stream
      // before this checkpoint): the stream starts from it, and nothing is read.
      Offset offset = found->offset;
      if (!offset.commit_ts) {
        offset.commit_ts = SnapshotStamp(source, clock, subject.instance, offset.lsn).commit_ts;
      }
      spdlog::info("bootstrap of capture instance '{}': {} already holds a {}snapshot of the "
                   "table at LSN {}; nothing is read",
                   ci, subject.target, found->chunked ? "chunked " : "", offset.lsn.ToString());
      const std::int64_t rows = tables.SnapshotRows(offset.lsn);
      AppendBootstrapFacts(request, tables, offset, rows, started_at, started);
      checkpoint.WriteSnapshot(SnapshotState{true, offset, rows, -1});
      result.offset = offset;
      result.rows = rows;
      return result;
    }
    // Recorded before the read, so no change after L can be missing from bronze.
    state = SnapshotState{false, SnapshotStamp(source, clock, subject.instance), 0, -1};
    checkpoint.WriteSnapshot(*state);
    if (tables.has_facts()) {
      // Before any row is read; once per stamp (a retake at the same stamp writes none).
      tables.AppendFacts(
          FactsToRecordBatch({SnapshotOpenFactsRow(subject.app_id, subject.target, state->offset,
                                                   request.cause)}),
          delta::Txn{OpenTxnAppId(subject.app_id), request.cause.generation, std::nullopt});
    }
  }
  const Offset offset = state->offset;
  spdlog::info("bootstrap of capture instance '{}' into {}: snapshot at LSN {}", ci,
               subject.target, offset.lsn.ToString());

  const delta::Txn txn{SnapshotTxnAppId(subject.app_id), 0, std::nullopt};
  std::int64_t rows = 0;
  if (tables.HoldsSnapshot(txn, offset.lsn)) {
    // The snapshot landed before a crash: count it, read nothing.
    rows = tables.SnapshotRows(offset.lsn);
  } else {
    RangePlanRequest ranges;
    ranges.instance = subject.instance;
    ranges.columns = subject.columns;
    ranges.key_columns = subject.key_columns;
    ranges.ranges = request.partitions;
    ranges.min_range_rows = request.min_range_rows;
    ParallelSnapshotRequest read;
    read.capture_instance = ci;
    read.plan = PlanSnapshotRanges(ranges, source);
    read.snapshot_lsn = offset.lsn;
    read.snapshot_commit_ts = offset.commit_ts.value_or(UtcMicros{});
    read.batch_rows = request.arrow_batch_size;
    read.batch_bytes = request.arrow_batch_bytes;
    if (read.plan.kind == RangeKind::kWhole) {
      spdlog::info("bootstrap of capture instance '{}': one range ({})", ci, read.plan.why_whole);
    } else {
      spdlog::info("bootstrap of capture instance '{}': {} {} ranges over key ({})", ci,
                   read.plan.ranges.size(),
                   read.plan.kind == RangeKind::kUniform ? "uniform" : "keyset",
                   fmt::join(read.plan.key_columns, ", "));
    }
    ParallelSnapshot reader =
        WholeSnapshotReader(std::move(read), source, sources, request.bronze_schema);
    const std::string user_metadata = WholeSnapshotMetadata(ci, offset).dump();
    StagedFileList staged_files(checkpoint.directory(), "snapshot");
    const bool written =
        tables.AppendSnapshot(reader, txn, user_metadata, staged_files.For(kStagedBronze));
    staged_files.Clear();
    // When another process with this app_id may have won the race, its rows are the snapshot.
    rows = written ? reader.rows() : tables.SnapshotRows(offset.lsn);
  }

  AppendBootstrapFacts(request, tables, offset, rows, started_at, started);
  checkpoint.WriteSnapshot(SnapshotState{true, offset, rows, tables.bronze_version()});
  spdlog::info("bootstrap of capture instance '{}' done: {} rows at LSN {}", ci, rows,
               offset.lsn.ToString());
  result.offset = offset;
  result.rows = rows;
  result.taken_now = true;
  return result;
}

}  // namespace mssql_cdc
