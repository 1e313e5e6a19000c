// Decoders from the SQLite value encodings of sim/storage.h to Arrow arrays of the output
// schema (docs/reference/tables.md): one decoder per captured column, fed row by row.
//
// A decoder appends without per-value allocation: Reserve(n) sizes its buffers for n more
// rows, Append reads the current row's value straight from SQLite's memory. A value
// whose storage class or text does not follow the encoding throws SourceError naming the
// column and the value; a corrupt file is never read as wrong data.
#pragma once

#include <arrow/type_fwd.h>
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/sql_type.h"

namespace mssql_cdc {

class ColumnDecoder {
 public:
  virtual ~ColumnDecoder() = default;
  // Makes room for `rows` more values; at most that many Append calls may follow before
  // the next Reserve or Finish.
  virtual void Reserve(std::int64_t rows) = 0;
  // Appends `value` (NULL included): a column of the current row, from sqlite3_column_value.
  // One handle per cell instead of a type, text and length call each keeps the SQLite API
  // overhead per value low; the reader's connection has no mutex, so the unprotected value is
  // safe to read.
  virtual void Append(sqlite3_value* value) = 0;
  // The values appended since the last Finish, as one array; the decoder is then empty.
  virtual std::shared_ptr<arrow::Array> Finish() = 0;
  // Whether values have variable length (text, binary), and their bytes since the last Finish.
  virtual bool variable_length() const { return false; }
  virtual std::int64_t data_bytes() const { return 0; }
};

// A decoder for a column of `type`, whose values come back as the Arrow type
// ArrowTypeFor(type). `label` names the column in error messages ("column 'price' of
// cdc.dbo_orders_CT"). Throws UnsupportedTypeError for unmapped types.
std::unique_ptr<ColumnDecoder> MakeColumnDecoder(const SqlType& type, std::string_view column,
                                                 std::string label);

// Parsers of the storage text forms, exposed for tests. nullopt when the text is malformed.
// "-12.3400" -> unscaled 128-bit value at `scale`, checked against `precision`.
struct Int128Parts {
  std::int64_t high = 0;
  std::uint64_t low = 0;
};
std::optional<Int128Parts> ParseStoredDecimal(std::string_view text, int precision, int scale);
// "YYYY-MM-DD HH:MM:SS.fffffff +HH:MM" -> microseconds since the epoch in UTC (digits past the
// sixth truncated).
std::optional<std::int64_t> ParseStoredDateTimeOffset(std::string_view text);
// "YYYY-MM-DD" -> days since 1970-01-01.
std::optional<std::int32_t> ParseStoredDate(std::string_view text);

}  // namespace mssql_cdc
