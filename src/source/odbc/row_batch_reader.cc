#include "source/odbc/row_batch_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.h"
#include "core/arrow_status.h"
#include "source/odbc/catalog_queries.h"
#include "source/odbc/failure_kind.h"
#include "source/output_schema.h"

namespace mssql_cdc::odbc {
namespace {

std::shared_ptr<arrow::Schema> MetadataSchema(bool include_command_id) {
  return OutputSchema(arrow::FieldVector{}, include_command_id);
}

}  // namespace

RowBatchReader::RowBatchReader(std::shared_ptr<const ReaderSettings> settings,
                               std::shared_ptr<arrow::Schema> schema,
                               std::string capture_instance_stamp, bool include_command_id,
                               std::vector<CapturedOutput> captured, std::int64_t batch_rows,
                               std::int64_t batch_bytes,
                               std::vector<int> resume_key, FailureContext context)
    : settings_(std::move(settings)),
      schema_(std::move(schema)),
      metadata_(MetadataSchema(include_command_id), std::move(capture_instance_stamp), {},
                include_command_id, batch_rows),
      captured_(std::move(captured)),
      batch_rows_(batch_rows),
      batch_bytes_(batch_bytes),
      resume_key_(std::move(resume_key)),
      context_(std::move(context)) {
  context_.login = settings_->connection->driver.login;
  context_.access_token = settings_->connection->driver.access_token.has_value();
  for (const auto& output : captured_) {
    if (output.column->variable_length()) variable_columns_.push_back(output.column.get());
  }
}

arrow::Status RowBatchReader::ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) {
  return ReadNextOrStatus(batch, [this] { return Next(); }, [this] {
    finished_ = true;
    Disconnect();
  });
}

std::shared_ptr<arrow::RecordBatch> RowBatchReader::Next() {
  if (finished_) return nullptr;
  int retries = 0;
  while (true) {
    try {
      if (!exhausted_ && statement_ == nullptr) Open();
      metadata_.Start();
      while (metadata_.rows() < batch_rows_ && BatchDataBytes() < batch_bytes_) {
        if (!AppendFromBlock(batch_rows_ - metadata_.rows())) break;
      }
      // Let go of the connection as soon as the rows are read.
      if (exhausted_) Disconnect(/*reusable=*/true);
      if (metadata_.rows() == 0) {
        finished_ = true;
        DiscardBatch();
        return nullptr;
      }
      auto batch = FinishBatch();
      delivered_ += batch->num_rows();
      last_row_ = batch->Slice(batch->num_rows() - 1, 1);
      SaveProgress();
      return batch;
    } catch (const OdbcFailure& failure) {
      DiscardBatch();
      fetcher_.reset();
      statement_.reset();
      const bool dead = connection_ != nullptr && connection_->IsDead();
      FailureContext context = context_;
      context.connection_dead = dead;
      context.database_user = [this] { return DatabaseUser(); };
      settings_->retry.RetryOrThrow(retries, failure, dead, std::move(context));
      Disconnect();
      RestoreProgress();
      exhausted_ = false;
    }
  }
}

void RowBatchReader::Open() {
  if (connection_ == nullptr && settings_->slot) connection_ = settings_->slot->Take();
  if (connection_ == nullptr) connection_ = std::make_unique<OdbcConnection>(settings_->connection);
  if (!prepared_) {
    Prepare(*connection_);
    prepared_ = true;
  }
  statement_ = std::make_unique<OdbcStatement>(*connection_);
  BindParameters(*statement_);
  if (!statement_->Execute(Sql())) {
    throw SourceError(context_.action + ": the server answered without a result set");
  }
  std::vector<ResultSlots*> slots = MetadataSlots();
  const std::size_t first_captured = slots.size();
  slots.resize(first_captured + captured_.size());
  for (auto& output : captured_) slots[first_captured + output.select_position] = output.column.get();
  fetcher_ = std::make_unique<ResultFetcher>(*statement_, std::move(slots),
                                             static_cast<std::size_t>(batch_rows_));
  block_rows_ = 0;
  cursor_ = 0;
  if (delivered_ > 0) SkipDelivered();
}

// After a retry: passes over the rows delivered before it and checks that the last of them
// is where it was. Rows of a change table range never move; a table being snapshotted may
// have changed under a read-committed read, which is then refused rather than misread.
void RowBatchReader::SkipDelivered() {
  std::int64_t to_skip = delivered_ - 1;
  while (to_skip > 0) {
    if (cursor_ == block_rows_) {
      block_rows_ = fetcher_->one_row_at_a_time() ? fetcher_->Skip() : fetcher_->Next();
      cursor_ = 0;
      if (block_rows_ == 0) break;
    }
    const auto take = std::min<std::int64_t>(static_cast<std::int64_t>(block_rows_ - cursor_), to_skip);
    cursor_ += static_cast<std::size_t>(take);
    to_skip -= take;
  }
  metadata_.Start();
  const bool found = to_skip == 0 && AppendFromBlock(1) && metadata_.rows() == 1;
  if (!found) {
    DiscardBatch();
    throw SourceError(context_.action + ": after reconnecting, the statement returned fewer "
                      "rows than the " + std::to_string(delivered_) + " already delivered, so "
                      "the read cannot resume where it stopped; run it again");
  }
  const auto probe = FinishBatch();
  std::vector<int> key = resume_key_;
  if (key.empty()) {
    for (int i = 0; i < probe->num_columns(); ++i) key.push_back(i);
  }
  for (int column : key) {
    if (!probe->column(column)->Equals(*last_row_->column(column))) {
      throw SourceError(context_.action + ": after reconnecting, row " +
                        std::to_string(delivered_) + " is not the row delivered there before "
                        "(column " + schema_->field(column)->name() + " differs), so the read "
                        "cannot resume where it stopped; run it again");
    }
  }
  spdlog::info("odbc: {}: resumed after {} delivered rows on a new connection", context_.action,
               delivered_);
}

bool RowBatchReader::AppendFromBlock(std::int64_t limit) {
  if (cursor_ == block_rows_) {
    if (exhausted_ || fetcher_ == nullptr) return false;
    block_rows_ = fetcher_->Next();
    cursor_ = 0;
    if (block_rows_ == 0) {
      exhausted_ = true;
      return false;
    }
  }
  const auto count = static_cast<std::size_t>(
      std::min<std::int64_t>(static_cast<std::int64_t>(block_rows_ - cursor_), limit));
  AppendMetadata(metadata_, cursor_, count);
  for (auto& output : captured_) output.column->Append(cursor_, count);
  cursor_ += count;
  return true;
}

std::shared_ptr<arrow::RecordBatch> RowBatchReader::FinishBatch() {
  const std::int64_t rows = metadata_.rows();
  const auto metadata = metadata_.Finish();
  std::vector<std::shared_ptr<arrow::Array>> arrays = metadata->columns();
  for (auto& output : captured_) arrays.push_back(output.column->Finish());
  return arrow::RecordBatch::Make(schema_, rows, std::move(arrays));
}

void RowBatchReader::DiscardBatch() {
  metadata_.Finish();
  for (auto& output : captured_) output.column->Finish();
}

std::int64_t RowBatchReader::BatchDataBytes() const {
  std::int64_t bytes = 0;
  for (const FetchColumn* column : variable_columns_) bytes += column->data_bytes();
  return bytes;
}

std::optional<std::string> RowBatchReader::DatabaseUser() {
  if (connection_ == nullptr) return std::nullopt;
  try {
    return QueryUserName(*connection_);
  } catch (const std::exception&) {
    return std::nullopt;  // the GRANT then names the login
  }
}

void RowBatchReader::Disconnect(bool reusable) {
  fetcher_.reset();
  statement_.reset();
  if (reusable && settings_->slot && LeavesSessionUnchanged()) {
    settings_->slot->GiveBack(std::move(connection_));
  }
  connection_.reset();
}

}  // namespace mssql_cdc::odbc
