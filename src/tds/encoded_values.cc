#include "tds/encoded_values.h"

#include <cstring>

#include "core/errors.h"

namespace mssql_cdc::tds {

bool CopyNullBits(std::string_view encoded, std::size_t count, std::uint8_t* row_bitmap,
                  std::size_t first_column) {
  const std::size_t bitmap_bytes = EncodedBitmapBytes(count);
  if (encoded.size() < bitmap_bytes) {
    throw InternalError("encoded values shorter than their null bitmap");
  }
  bool any_null = false;
  for (std::size_t byte = 0; byte < bitmap_bytes; ++byte) {
    const auto bits = static_cast<std::uint8_t>(encoded[byte]);
    if (bits == 0) continue;
    any_null = true;
    for (std::size_t bit = 0; bit < 8; ++bit) {
      if ((bits & (1u << bit)) == 0) continue;
      const std::size_t column = first_column + byte * 8 + bit;
      row_bitmap[column / 8] |= static_cast<std::uint8_t>(1u << (column % 8));
    }
  }
  return any_null;
}

EncodedValuesWriter::EncodedValuesWriter(const std::vector<ResultColumn>& columns) {
  codecs_.reserve(columns.size());
  for (const ResultColumn& column : columns) codecs_.emplace_back(column);
  Clear();
}

void EncodedValuesWriter::Clear() {
  out_.clear();
  std::memset(out_.Extend(EncodedBitmapBytes(codecs_.size())), 0,
              EncodedBitmapBytes(codecs_.size()));
  column_ = 0;
}

const ColumnCodec& EncodedValuesWriter::NextColumn() {
  if (column_ >= codecs_.size()) {
    throw InternalError("encoded values of " + std::to_string(codecs_.size()) +
                        " columns got more values");
  }
  return codecs_[column_++];
}

void EncodedValuesWriter::Null() {
  const std::size_t index = column_;
  const ColumnCodec& codec = NextColumn();
  if (!codec.nullable()) {
    WireBuffer scratch;
    codec.Null(scratch);  // throws, naming the column
  }
  out_.data()[index / 8] |= static_cast<std::uint8_t>(1u << (index % 8));
}

void EncodedValuesWriter::Int(std::int64_t value) { NextColumn().Int(out_, value); }

void EncodedValuesWriter::Float(double value) { NextColumn().Float(out_, value); }

void EncodedValuesWriter::Text(std::string_view value) { NextColumn().Text(out_, value); }

void EncodedValuesWriter::Binary(std::string_view value) { NextColumn().Binary(out_, value); }

void EncodedValuesWriter::EncodedValues(std::string_view encoded, std::size_t count) {
  if (column_ + count > codecs_.size()) {
    throw InternalError("encoded values of " + std::to_string(codecs_.size()) +
                        " columns got more values");
  }
  CopyNullBits(encoded, count, out_.data(), column_);
  out_.PutBytes(encoded.substr(EncodedBitmapBytes(count)));
  column_ += count;
}

void EncodedValuesWriter::EndRow() {
  if (column_ != codecs_.size()) {
    throw InternalError("encoded values of " + std::to_string(codecs_.size()) +
                        " columns ended after " + std::to_string(column_));
  }
}

}  // namespace mssql_cdc::tds
