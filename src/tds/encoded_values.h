// The values of some columns of a row, encoded once in the form an NBCROW carries them, so
// that they can be sent again and again without encoding them again: a null bitmap of
// ceil(count / 8) bytes (bit i, counted from the lowest bit of the first byte, set when
// column i is NULL), then the encodings of the columns that are not NULL, in column order.
//
// EncodedValuesWriter makes them through the ResultSet calls and ColumnCodec, and
// ResultSet::EncodedValues splices them into a row being sent. The columns they are made for
// must have the types of the result columns they are sent in; names do not matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tds/column_codec.h"
#include "tds/query_handler.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {

// The bytes of the null bitmap of `count` encoded values.
inline std::size_t EncodedBitmapBytes(std::size_t count) { return (count + 7) / 8; }

// Copies the null bits of `count` encoded values into a row's null bitmap, the first at bit
// `first_column`; true when any of them is NULL.
bool CopyNullBits(std::string_view encoded, std::size_t count, std::uint8_t* row_bitmap,
                  std::size_t first_column);

class EncodedValuesWriter final : public ResultSet {
 public:
  // Throws as ColumnCodec does for a column without a wire form.
  explicit EncodedValuesWriter(const std::vector<ResultColumn>& columns);

  // Starts a new row, dropping whatever a value that threw left behind.
  void Clear();

  void Null() override;
  void Int(std::int64_t value) override;
  void Float(double value) override;
  void Text(std::string_view value) override;
  void Binary(std::string_view value) override;
  bool TakesEncodedValues() const override { return true; }
  void EncodedValues(std::string_view encoded, std::size_t count) override;
  // Checks that every column got its value.
  void EndRow() override;

  // The row ended last; valid until the next call.
  std::string_view row() const { return out_.view(); }

 private:
  const ColumnCodec& NextColumn();

  std::vector<ColumnCodec> codecs_;
  WireBuffer out_;
  std::size_t column_ = 0;
};

}  // namespace mssql_cdc::tds
