// The data files a stream is writing before the commits that name them.
//
// A batch streams its rows into Parquet files as it reads them and names them all in one
// bronze commit at the end, then appends its facts row and moves its verdict. A crash in
// between leaves files that no commit names: readers never see them, and this list lets the
// next run delete them. Each file is listed in <checkpoint>/staged/<name>.<attempt>.files
// (one list per attempt at a unit, so that a replay never overwrites the list of the attempt
// a crash stopped), one "<table> <relative path>" line per file (table: bronze, facts or
// control), before the file is created; the list is removed once the unit is done. The list
// is written whole at each line, since object stores cannot append.
//
// Record may be called from several threads at once (one per range being read).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine/checkpoint_directory.h"

namespace mssql_cdc {

// The tables a stream's staged files belong to.
inline constexpr char kStagedBronze[] = "bronze";
inline constexpr char kStagedFacts[] = "facts";

class StagedFileList {
 public:
  // `name` is the batch id, or "snapshot" for the bootstrap.
  StagedFileList(std::string checkpoint_directory, std::string name);

  // Lists `relative_path` of `table` before the file is created. SourceError when the list
  // cannot be written.
  void Record(const std::string& table, const std::string& relative_path);
  // An observer for one table, for DataFileStream and AppendOptions::on_file.
  std::function<void(const std::string&)> For(const std::string& table);
  // Removes the list: its files are committed, or deleted.
  void Clear();

 private:
  CheckpointDirectory dir_;
  std::string relative_;
  std::mutex mutex_;
  std::string lines_;
};

using DeleteUnnamedFiles =
    std::function<void(const std::string& table, const std::vector<std::string>& relative_paths)>;

// Hands the files of every staged list of the checkpoint, table by table, to `delete_unnamed`
// (which deletes those no commit of that table names: DeltaTable::DeleteUnnamedFiles), then
// removes the lists. Only names a data file writer gives are handed over, so a damaged list
// cannot point outside a table. For the owner of the checkpoint, which a lock makes the only
// writer, before it writes.
void DeleteUncommittedStagedFiles(const std::string& checkpoint_directory,
                                  const DeleteUnnamedFiles& delete_unnamed);

// The same for the lists of the units `settled` says are done (a batch with its commit
// marker): where no lock keeps other runs out (an object store), a unit still open may be
// another live run's, whose files are not yet named. Returns how many lists were left.
int DeleteSettledStagedFiles(const std::string& checkpoint_directory,
                             const std::function<bool(const std::string& unit)>& settled,
                             const DeleteUnnamedFiles& delete_unnamed);

}  // namespace mssql_cdc
