// Assembles record batches of the output schema (source/output_schema.h) row by row for the
// sim readers: the metadata columns written straight into Arrow buffers, the captured columns
// through their ColumnDecoders.
//
// Usage per batch: Start(), then per row AppendMetadata(...) first and one Append on every
// decoder after it, then Finish(). At most `batch_rows` rows per batch. AppendMetadata makes
// room for the whole row, in steps, so every append after it is unchecked. A batch is full at
// `batch_rows` rows, or once its variable-length values pass `batch_bytes`.
#pragma once

#include <arrow/builder.h>
#include <arrow/record_batch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "source/source.h"
#include "source/sim/sqlite_column_decoders.h"

namespace mssql_cdc {

class OutputBatchBuilder {
 public:
  // `schema` is OutputSchema(columns, include_command_id) and `decoders` decode those columns
  // in that order. Throws ConfigError when batch_rows < 1.
  OutputBatchBuilder(std::shared_ptr<arrow::Schema> schema, std::string capture_instance,
                     std::vector<std::unique_ptr<ColumnDecoder>> decoders,
                     bool include_command_id, std::int64_t batch_rows,
                     std::int64_t batch_bytes = kDefaultBatchDataBytes);

  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  std::int64_t batch_rows() const { return batch_rows_; }
  std::int64_t rows() const { return rows_; }
  bool full() const { return rows_ >= batch_rows_ || DataBytes() >= batch_bytes_; }
  std::size_t column_count() const { return decoders_.size(); }
  ColumnDecoder& column(std::size_t i) { return *decoders_[i]; }

  void Start();
  // `start_lsn` and `seqval` point at 10 bytes; a null seqval or command id is NULL.
  void AppendMetadata(const std::uint8_t* start_lsn, const std::uint8_t* seqval,
                      std::int32_t operation, std::optional<std::int32_t> command_id,
                      std::int64_t commit_ts_micros);
  std::shared_ptr<arrow::RecordBatch> Finish();

 private:
  void Grow();
  std::int64_t DataBytes() const;
  static void FormatHex(const std::uint8_t* bytes, char* text);  // 22 chars, no terminator
  void AppendHex(arrow::StringBuilder& builder, const std::uint8_t* bytes);

  std::shared_ptr<arrow::Schema> schema_;
  std::string capture_instance_;
  std::vector<std::unique_ptr<ColumnDecoder>> decoders_;
  bool include_command_id_;
  std::int64_t batch_rows_;
  std::int64_t batch_bytes_;
  std::vector<const ColumnDecoder*> variable_decoders_;  // those DataBytes counts
  std::int64_t rows_ = 0;
  std::int64_t reserved_ = 0;  // rows the builders have room for in this batch
  std::uint8_t last_start_lsn_[10] = {};
  char last_start_lsn_text_[22] = {};

  arrow::StringBuilder capture_instance_builder_;
  arrow::StringBuilder start_lsn_builder_;
  arrow::StringBuilder seqval_builder_;
  arrow::Int32Builder operation_builder_;
  arrow::Int32Builder command_id_builder_;
  arrow::TimestampBuilder commit_ts_builder_;
};

}  // namespace mssql_cdc
