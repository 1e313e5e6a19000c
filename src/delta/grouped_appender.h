// Small appends of many threads to one table, made a few commits at a time: each Append waits
// until its rows are in a commit, which holds the rows and txns of every append that came
// while the one before was being written (core/group_commit.h, DeltaTable::AppendGrouped).
// A thousand streams appending a facts row each second then make a few commits a second, not
// a thousand, and none loses a commit race to another. Thread-safe.
#pragma once

#include <arrow/type_fwd.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/group_commit.h"
#include "delta/table.h"

namespace mssql_cdc::delta {

class GroupedAppender {
 public:
  explicit GroupedAppender(DeltaTable table);

  // Appends `batches` with `txn` (an app id no other append of the same group shares), telling
  // `on_file` each data file of the commit before it is created. Returns as Append does.
  CommitResult Append(std::vector<std::shared_ptr<arrow::RecordBatch>> batches, const Txn& txn,
                      std::function<void(const std::string&)> on_file = nullptr);

  // Deletes those of `relative_paths` no commit names (DeltaTable::DeleteUnnamedFiles).
  int DeleteUnnamedFiles(const std::vector<std::string>& relative_paths);

  // Commits made, and appends they held, since construction.
  std::int64_t commits() const;
  std::int64_t appends() const;

 private:
  struct Request {
    DeltaTable::GroupedPart part;
    std::function<void(const std::string&)> on_file;
    CommitResult* result = nullptr;
  };
  void WriteAll(std::vector<Request>& requests);

  mutable std::mutex table_mutex_;  // the table is used by one thread at a time
  DeltaTable table_;
  GroupCommit<Request> group_;
  std::int64_t commits_ = 0;
  std::int64_t appends_ = 0;
};

}  // namespace mssql_cdc::delta
