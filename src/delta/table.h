// A Delta Lake table on a filesystem, written and read by this engine without Spark.
//
// DeltaTable promises what a Delta reader (Spark, delta-rs) relies on:
// - A commit is one file _delta_log/<version>.json, created only if absent and never
//   overwritten; the data files it names are written before it. A crash leaves either the
//   whole commit or none of it.
// - Exactly once: an append may carry a txn (app_id, version). When the table already holds
//   that app_id at that version or later, the append writes nothing and says which table
//   version holds it.
// - Optimistic concurrency: a writer that loses the race for a version re-reads the log and
//   retries when its commit is a blind append that conflicts with nothing; otherwise it fails
//   with an error naming the conflict.
// - A checkpoint (classic, one Parquet file) every 10 commits, and _last_checkpoint.
//
// A DeltaTable object is used from one thread at a time; several processes may write one
// table at once.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/table_options.h"
#include "delta/table_state.h"
#include "storage/file_system.h"

namespace mssql_cdc::delta {

class DataFileStream;

class DeltaTable {
 public:
  // `uri` is a path or a file:// URI.
  static bool Exists(const std::string& uri);
  // Creates the table; a no-op when it exists with the same schema; SchemaChangedError when it
  // exists with another.
  static DeltaTable Create(const std::string& uri, const CreateOptions& options);
  // Throws SourceError naming the path when it is not a Delta table or its log cannot be read.
  static DeltaTable Open(const std::string& uri);

  const std::string& uri() const;
  // The state this object last read or wrote.
  const TableState& state() const;
  // Reads the log again.
  const TableState& Refresh();
  // Reads the commits other writers made since that state into it (cheap: one lookup when
  // there are none).
  const TableState& CatchUp();

  // The commit that gave `app_id` its current txn version in the snapshot: its table version,
  // the txn version and its commitInfo.userMetadata. nullopt when the snapshot holds no txn
  // for the app id or the commit is no longer on disk.
  struct TxnCommit {
    std::int64_t table_version = -1;
    std::int64_t txn_version = -1;
    std::optional<std::string> user_metadata;
  };
  std::optional<TxnCommit> CommitHoldingTxn(const std::string& app_id) const;

  CommitResult Append(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                      const AppendOptions& options = {});

  // The appends of several writers in one commit, each with its txn (one app id each): for a
  // table many streams append small rows to (the facts table), so that they make one commit
  // instead of one each. A part whose txn the table already holds is left out; a race lost to
  // a commit holding one of the txns, or to a blind append, is planned again on the new
  // snapshot. Returns one result per part, in order: written, and the version that holds it.
  struct GroupedPart {
    Txn txn;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  };
  std::vector<CommitResult> AppendGrouped(const std::vector<GroupedPart>& parts,
                                          const AppendOptions& options = {});

  // An append too big to hold in memory, in two steps: StageAppend plans it on the current
  // snapshot (the schema its rows are written in, merged with `incoming` as Append would), the
  // caller writes the rows through DataFileStreams from NewFileStream, on any threads, and
  // CommitStaged names every file in one commit, with the conflict rules of Append. When the
  // table already holds options.txn, StageAppend says so (held_version) and nothing need be
  // written; CommitStaged then, or when another writer took the txn meanwhile, deletes the
  // files it was given and commits nothing.
  class Staged {
   public:
    // The schema every batch of the append is written in.
    const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
    // The version holding the append's txn when the table held it at StageAppend.
    std::optional<std::int64_t> held_version() const { return held_version_; }
    // A stream of this append's data files, numbered `part`.
    std::unique_ptr<DataFileStream> NewFileStream(std::size_t part) const;
    // The commit's userMetadata, known only once the rows are written (JSON text).
    void set_user_metadata(std::string json) { options_.user_metadata = std::move(json); }

   private:
    friend class DeltaTable;
    std::shared_ptr<storage::FileSystem> fs_;
    std::string root_;
    AppendOptions options_;
    std::shared_ptr<arrow::Schema> schema_;
    std::optional<Metadata> metadata_;
    std::optional<Protocol> protocol_;
    std::int64_t read_version_ = -1;
    std::optional<std::int64_t> held_version_;
  };
  Staged StageAppend(const std::shared_ptr<arrow::Schema>& incoming,
                     const AppendOptions& options = {});
  // `files` in row order, as the streams finished them.
  CommitResult CommitStaged(const Staged& staged, const std::vector<AddFile>& files);

  // Copy-on-write upsert for small tables: rows whose `key_column` equals a key in `rows`
  // are replaced by those rows, others kept; one commit removes the old files and adds the
  // new one. On a lost race the merge is recomputed on the new snapshot.
  CommitResult UpsertByKey(const std::string& key_column,
                           const std::shared_ptr<arrow::Table>& rows,
                           const AppendOptions& options = {});
  // The same, written only if `should_write` approves: it is called on every attempt's
  // snapshot with the table's current rows whose keys are upserted (in the table's schema;
  // no rows when none exist). False commits nothing and returns written=false, so a caller can
  // make an upsert conditional on state a concurrent writer may change (compare and set).
  using UpsertCondition =
      std::function<bool(const std::shared_ptr<arrow::Table>& current_rows_with_those_keys)>;
  CommitResult UpsertByKey(const std::string& key_column,
                           const std::shared_ptr<arrow::Table>& rows,
                           const AppendOptions& options, const UpsertCondition& should_write);

  // A copy-on-write change of some of the table's files, the one way this engine removes
  // rows: `plan` is given each attempt's snapshot and the schema rows are written in (the
  // table's, merged with `incoming`), and says which files go and which rows take their place.
  // One commit removes those files and adds the new ones. A race lost to another writer's
  // data commit is planned again on the new snapshot, except that a rewrite with
  // data_change=false is committed as written when no winner removed one of its files; a race
  // lost to a change of the schema, properties or protocol fails with
  // ConcurrentModificationError, nothing committed.
  struct Rewrite {
    std::vector<AddFile> remove;
    std::vector<std::shared_ptr<arrow::RecordBatch>> rows;  // in the schema `plan` was given
    // More rows, each part written into files of its own rather than with `rows`: a rewritten
    // file's rows stay together, so that the key ranges of files stay apart.
    std::vector<std::vector<std::shared_ptr<arrow::RecordBatch>>> parts;
    // Rows too many to hold, written through a stream of the rewrite's files once the rows and
    // parts are: called again on each attempt, in the schema `plan` was given.
    std::function<void(DataFileStream&)> stream_rows;
    std::string predicate;  // what the rewrite matched, for commitInfo
    bool commit = true;     // false: nothing is committed (written=false)
    // false: the rows are the same rows in other files (compaction), so that streaming
    // readers skip the commit (dataChange=false on its add and remove actions).
    bool data_change = true;

    // Adds all of `table`'s rows as one more part; a failed read throws rather than losing rows.
    void AddPart(const arrow::Table& table);
  };
  using RewritePlanner = std::function<Rewrite(const TableState& snapshot,
                                               const std::shared_ptr<arrow::Schema>& schema)>;
  CommitResult RewriteFiles(const std::shared_ptr<arrow::Schema>& incoming,
                            const RewritePlanner& plan, const AppendOptions& options);
  // The rows of `files` in `schema` (the snapshot's when null): columns a file lacks read as
  // NULL.
  std::shared_ptr<arrow::Table> ReadFiles(const std::vector<AddFile>& files,
                                          const std::shared_ptr<arrow::Schema>& schema = nullptr) const;

  // The data files commit `version` added; nullopt when the commit is no longer on disk, or
  // when one of its files is no longer in the table (compacted since, and perhaps vacuumed).
  std::optional<std::vector<AddFile>> FilesAddedBy(std::int64_t version) const;

  // The data files the log names that the store does not have (add.path as the log has it): a
  // file deleted by hand, whose rows every reader then fails on. All the active files, with
  // one listing per folder; or, given `newest_commits`, only the active files the newest that
  // many commits added, one look-up each: cheap enough for every run's start
  // (missing_files.cc).
  std::vector<std::string> MissingFiles(std::optional<int> newest_commits = std::nullopt) const;

  // Compaction (OPTIMIZE): the table's files smaller than three quarters of
  // `target_file_bytes`, oldest first, packed into groups of at most that size; each group
  // of two or more files is rewritten into one file, its rows in the same order, in one commit
  // with dataChange=false (streaming readers and exactly-once replays see the same rows). A
  // race lost to a writer is planned again on the new snapshot. written=false: nothing to do.
  CommitResult Compact(std::int64_t target_file_bytes);

  // VACUUM: deletes the data files no snapshot younger than `retention_ms` can name: files
  // removed (tombstones) longer ago than that, and files no commit names (a killed writer's)
  // and temporary files (".*.tmp", here and in _delta_log) last written longer ago than that.
  // Files of the current snapshot are never deleted. Returns the paths deleted (or, with
  // `dry_run`, that would be), relative to the root.
  std::vector<std::string> Vacuum(std::int64_t retention_ms, bool dry_run);
  // The columns `columns` (of the table's schema) of `files`, a row group at a time
  // (data_file_scan.h). InternalError for a column the table does not have.
  void ScanFiles(const std::vector<AddFile>& files, const std::vector<std::string>& columns,
                 const std::function<void(const arrow::RecordBatch&)>& visit) const;

  // Deletes those of `relative_paths` (data files under the root) that the snapshot, caught
  // up first, does not name: files a writer created and never committed. Returns how many
  // were deleted; a file already gone is no error.
  int DeleteUnnamedFiles(const std::vector<std::string>& relative_paths);

  // The table's rows (or those matching every filter term), in the table's current schema:
  // columns a file lacks read as NULL.
  std::shared_ptr<arrow::Table> Read(const std::vector<FilterTerm>& filter = {}) const;

 private:
  DeltaTable(std::shared_ptr<storage::FileSystem> fs, std::string uri, TableState snapshot);
  void CheckpointIfDue();
  // After `actions` were written as commit `version` on try `attempt`: the snapshot takes
  // them in, a checkpoint follows when due, and the result counts the `adds` and their `rows`.
  CommitResult Committed(const std::vector<Action>& actions, std::int64_t version,
                         const std::vector<AddFile>& adds, std::int64_t rows, int attempt);
  // The blind append of `adds` (written in staged.schema()): commits at the next free version,
  // or learns that a winner holds the txn (then deletes the adds).
  CommitResult CommitAdds(const Staged& staged, const std::vector<AddFile>& adds,
                          std::int64_t rows);
  std::shared_ptr<storage::FileSystem> fs_;
  std::string uri_;
  std::string root_;  // the resolved local path of uri_
  TableState state_;
};

}  // namespace mssql_cdc::delta
