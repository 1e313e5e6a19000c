// The record batch reader behind ReadChanges and ReadSnapshot: runs one statement on a
// connection of its own and turns its rows into record batches of the output schema.
//
// Batches hold at most batch_rows rows, and end early once their variable-length data passes
// batch_bytes (checked after each fetched block, which holds at most about 8 MiB, or each row
// of a result read row by row).
// A transient failure (failure_kind.h) while connecting, running or fetching is retried by
// the RetryPolicy on a new connection: the statement runs again and the rows already
// delivered are skipped, after checking that the last of them comes back in the same place
// (same key), so no row is delivered twice or lost and no batch is delivered in part. Any
// other failure, or the last retry's, comes back from ReadNext as a Status carrying the
// engine's Error (core/arrow_status.h).
//
// Subclasses say which statement to run, which result columns come before the captured
// ones, and how those fill the metadata columns.
#pragma once

#include <arrow/record_batch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "source/odbc/connection.h"
#include "source/odbc/connection_slot.h"
#include "source/odbc/failure_errors.h"
#include "source/odbc/fetch_column.h"
#include "source/odbc/result_fetcher.h"
#include "source/odbc/retry_policy.h"
#include "source/odbc/statement.h"
#include "source/output_batch_builder.h"

namespace mssql_cdc::odbc {

// What a reader needs of the Source that made it; shared, so a reader may outlive it.
struct ReaderSettings {
  std::shared_ptr<const ConnectionSettings> connection;
  RetryPolicy retry;
  std::shared_ptr<ConnectionSlot> slot;  // the Source's idle connection (connection_slot.h)
};

// A captured column of the output and its place in the statement's select list.
struct CapturedOutput {
  std::unique_ptr<FetchColumn> column;
  std::size_t select_position = 0;  // 0-based among the captured columns of the select list
};

class RowBatchReader : public arrow::RecordBatchReader {
 public:
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override;

 protected:
  // `schema`: the output schema; `captured`: its captured columns in output order.
  // `resume_key`: output column indices that identify a row (empty: the whole row).
  RowBatchReader(std::shared_ptr<const ReaderSettings> settings, std::shared_ptr<arrow::Schema> schema,
                 std::string capture_instance_stamp, bool include_command_id,
                 std::vector<CapturedOutput> captured, std::int64_t batch_rows,
                 std::int64_t batch_bytes,
                 std::vector<int> resume_key, FailureContext context);

  // Runs once per reader, on its connection, before the statement first runs.
  virtual void Prepare(OdbcConnection& connection) {}
  // Whether the connection is as it was after the read (no session setting changed), so that
  // it can go back to the Source's slot.
  virtual bool LeavesSessionUnchanged() const { return true; }
  virtual std::string Sql() const = 0;
  virtual void BindParameters(OdbcStatement& statement) const = 0;
  // The result columns before the captured ones, in result order.
  virtual std::vector<ResultSlots*> MetadataSlots() = 0;
  // Appends the metadata of fetched rows [first, first + count) to `metadata`, one
  // AppendMetadata per row.
  virtual void AppendMetadata(OutputBatchBuilder& metadata, std::size_t first, std::size_t count) = 0;
  // The state that converting rows changes (commit time conversion): saved after each
  // delivered batch, restored before a retry.
  virtual void SaveProgress() {}
  virtual void RestoreProgress() {}

 private:
  std::shared_ptr<arrow::RecordBatch> Next();
  void Open();
  void SkipDelivered();
  // Appends up to `limit` rows from the fetched block; false at the end of the result.
  bool AppendFromBlock(std::int64_t limit);
  std::shared_ptr<arrow::RecordBatch> FinishBatch();
  void DiscardBatch();
  std::optional<std::string> DatabaseUser();
  // Lets go of the connection: back to the slot after a read that ended well (`reusable`),
  // closed otherwise.
  void Disconnect(bool reusable = false);
  std::int64_t BatchDataBytes() const;

  std::shared_ptr<const ReaderSettings> settings_;
  std::shared_ptr<arrow::Schema> schema_;
  OutputBatchBuilder metadata_;
  std::vector<CapturedOutput> captured_;
  std::vector<const FetchColumn*> variable_columns_;  // those BatchDataBytes counts
  std::int64_t batch_rows_;
  std::int64_t batch_bytes_;
  std::vector<int> resume_key_;
  FailureContext context_;

  std::unique_ptr<OdbcConnection> connection_;
  std::unique_ptr<OdbcStatement> statement_;
  std::unique_ptr<ResultFetcher> fetcher_;
  std::size_t block_rows_ = 0;  // rows of the last fetch
  std::size_t cursor_ = 0;      // the next of them to convert
  bool prepared_ = false;
  bool exhausted_ = false;  // the result has no more rows
  bool finished_ = false;   // everything was delivered
  std::int64_t delivered_ = 0;
  std::shared_ptr<arrow::RecordBatch> last_row_;  // the last delivered row
};

}  // namespace mssql_cdc::odbc
