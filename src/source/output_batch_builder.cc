#include "source/output_batch_builder.h"

#include <arrow/type.h>

#include <algorithm>
#include <cstring>

#include "core/errors.h"
#include "core/lsn.h"

namespace mssql_cdc {
namespace {

constexpr std::int64_t kHexLsnChars = 2 + 2 * Lsn::kSize;
// Buffers grow by this many rows at a time, so a huge batch_rows does not allocate up front.
constexpr std::int64_t kGrowthRows = 65'536;

void Check(const arrow::Status& status) {
  if (!status.ok()) throw SourceError("cannot build a record batch: " + status.ToString());
}

}  // namespace

OutputBatchBuilder::OutputBatchBuilder(std::shared_ptr<arrow::Schema> schema,
                                       std::string capture_instance,
                                       std::vector<std::unique_ptr<ColumnDecoder>> decoders,
                                       bool include_command_id, std::int64_t batch_rows,
                                       std::int64_t batch_bytes)
    : schema_(std::move(schema)),
      capture_instance_(std::move(capture_instance)),
      decoders_(std::move(decoders)),
      include_command_id_(include_command_id),
      batch_rows_(batch_rows),
      batch_bytes_(batch_bytes),
      commit_ts_builder_(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool()) {
  if (batch_rows_ < 1) {
    throw ConfigError("batch_rows must be at least 1, got " + std::to_string(batch_rows_));
  }
  if (batch_bytes_ < 1) {
    throw ConfigError("batch_bytes must be at least 1, got " + std::to_string(batch_bytes_));
  }
  for (const auto& decoder : decoders_) {
    if (decoder->variable_length()) variable_decoders_.push_back(decoder.get());
  }
}

std::int64_t OutputBatchBuilder::DataBytes() const {
  std::int64_t bytes = 0;
  for (const ColumnDecoder* decoder : variable_decoders_) bytes += decoder->data_bytes();
  return bytes;
}

void OutputBatchBuilder::Start() {
  rows_ = 0;
  reserved_ = 0;
}

void OutputBatchBuilder::Grow() {
  const std::int64_t n = std::min(kGrowthRows, batch_rows_ - rows_);
  Check(capture_instance_builder_.Reserve(n));
  Check(capture_instance_builder_.ReserveData(n * static_cast<std::int64_t>(capture_instance_.size())));
  Check(start_lsn_builder_.Reserve(n));
  Check(start_lsn_builder_.ReserveData(n * kHexLsnChars));
  Check(seqval_builder_.Reserve(n));
  Check(seqval_builder_.ReserveData(n * kHexLsnChars));
  Check(operation_builder_.Reserve(n));
  if (include_command_id_) Check(command_id_builder_.Reserve(n));
  Check(commit_ts_builder_.Reserve(n));
  for (auto& decoder : decoders_) decoder->Reserve(n);
  reserved_ += n;
}

void OutputBatchBuilder::FormatHex(const std::uint8_t* bytes, char* text) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  text[0] = '0';
  text[1] = 'x';
  for (std::size_t i = 0; i < Lsn::kSize; ++i) {
    text[2 + 2 * i] = kDigits[bytes[i] >> 4];
    text[3 + 2 * i] = kDigits[bytes[i] & 0xF];
  }
}

void OutputBatchBuilder::AppendHex(arrow::StringBuilder& builder, const std::uint8_t* bytes) {
  char text[kHexLsnChars];
  FormatHex(bytes, text);
  builder.UnsafeAppend(text, static_cast<std::int32_t>(kHexLsnChars));
}

void OutputBatchBuilder::AppendMetadata(const std::uint8_t* start_lsn, const std::uint8_t* seqval,
                                        std::int32_t operation,
                                        std::optional<std::int32_t> command_id,
                                        std::int64_t commit_ts_micros) {
  if (rows_ == reserved_) Grow();
  capture_instance_builder_.UnsafeAppend(capture_instance_);
  // The rows of a transaction share their start LSN: format it once.
  if (std::memcmp(start_lsn, last_start_lsn_, Lsn::kSize) != 0 || rows_ == 0) {
    std::memcpy(last_start_lsn_, start_lsn, Lsn::kSize);
    FormatHex(start_lsn, last_start_lsn_text_);
  }
  start_lsn_builder_.UnsafeAppend(last_start_lsn_text_, static_cast<std::int32_t>(kHexLsnChars));
  if (seqval != nullptr) {
    AppendHex(seqval_builder_, seqval);
  } else {
    seqval_builder_.UnsafeAppendNull();
  }
  operation_builder_.UnsafeAppend(operation);
  if (include_command_id_) {
    if (command_id) {
      command_id_builder_.UnsafeAppend(*command_id);
    } else {
      command_id_builder_.UnsafeAppendNull();
    }
  }
  commit_ts_builder_.UnsafeAppend(commit_ts_micros);
  ++rows_;
}

std::shared_ptr<arrow::RecordBatch> OutputBatchBuilder::Finish() {
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  arrays.reserve(static_cast<std::size_t>(schema_->num_fields()));
  auto finish = [&arrays](arrow::ArrayBuilder& builder) {
    std::shared_ptr<arrow::Array> out;
    Check(builder.Finish(&out));
    arrays.push_back(std::move(out));
  };
  finish(capture_instance_builder_);
  finish(start_lsn_builder_);
  finish(seqval_builder_);
  finish(operation_builder_);
  if (include_command_id_) finish(command_id_builder_);
  finish(commit_ts_builder_);
  for (auto& decoder : decoders_) arrays.push_back(decoder->Finish());
  const std::int64_t rows = rows_;
  rows_ = 0;
  return arrow::RecordBatch::Make(schema_, rows, std::move(arrays));
}

}  // namespace mssql_cdc
