// Where the values of one result column go: ODBC buffers the driver fills ("slots"), and for
// captured columns the Arrow array of the output schema they are converted into.
//
// A result is fetched either in arrays (every column bound, many rows per SQLFetch) or one
// row at a time, when some column has no bounded size (the (max) types, xml, text, ntext,
// image): then the columns before it stay bound and it and the columns after it are read
// with SQLGetData, in pieces for the long ones (result_fetcher.h decides). Either way the
// values of a fetch sit in slots 0..n-1 until Append converts a range of them.
//
// Conversion writes straight into Arrow buffers with no allocation per value: fixed-width
// values are converted in a loop per column, text arrives as UTF-16 (SQL_C_WCHAR) and is
// written as UTF-8 into the value buffer (or as UTF-8 already, from a driver that offers it
// for single-byte text), decimals arrive as text (or, from FreeTDS, as SQL_NUMERIC_STRUCT)
// and become Decimal128, time and datetimeoffset arrive as the SQL Server driver structures.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/sql_type.h"
#include "source/odbc/statement.h"

namespace mssql_cdc::odbc {

// The ODBC side of a result column.
class ResultSlots {
 public:
  virtual ~ResultSlots() = default;
  // Whether the column, as the server described it, has a bounded size that can be bound.
  virtual bool Bindable(const ColumnDescription& described) const = 0;
  // Bytes one bound slot takes (value and indicator), for sizing the fetch arrays.
  virtual std::size_t SlotBytes(const ColumnDescription& described) const = 0;
  // Makes `slots` slots (1 when the column is read with SQLGetData).
  virtual void Allocate(const ColumnDescription& described, std::size_t slots) = 0;
  virtual void Bind(const OdbcStatement& statement, SQLUSMALLINT column) = 0;
  // Reads the current row's value into slot 0 with SQLGetData.
  virtual void Get(const OdbcStatement& statement, SQLUSMALLINT column) = 0;
};

// A captured column: its slots and its output array.
class FetchColumn : public ResultSlots {
 public:
  // Converts slots [first, first + count) into the array being built.
  virtual void Append(std::size_t first, std::size_t count) = 0;
  // The array of the values appended since the last Finish; the column is then empty.
  virtual std::shared_ptr<arrow::Array> Finish() = 0;
  // Whether values have variable length (text, binary), which data_bytes counts.
  virtual bool variable_length() const { return false; }
  // Bytes of variable-length data appended since the last Finish.
  virtual std::int64_t data_bytes() const { return 0; }
  // Whether `type` has no bounded size: read with SQLGetData, placed last in a select list.
  static bool IsLong(const SqlType& type);
};

// The select-list order of columns of `types`: bounded columns first, then the long ones,
// each group in the given order (long values are read with SQLGetData, which drivers allow
// only after the bound columns). Returns, per column, its position in that order.
std::vector<std::size_t> SelectPositions(const std::vector<SqlType>& types);

// What the driver offers beyond standard ODBC.
struct FetchOptions {
  // SQL_C_CHAR data comes as UTF-8 (FreeTDS with ClientCharset=UTF-8).
  bool utf8_char_data = false;
  // decimal and numeric values asked for as SQL_C_BINARY come as SQL_NUMERIC_STRUCT at the
  // column's own precision and scale (FreeTDS), which spares printing and parsing them as text.
  bool numeric_struct_binary = false;
};

// The column for values of `type`, producing ArrowTypeFor(type). `label` names it in
// messages ("column 'price' of cdc.[dbo_orders_CT]"). Throws UnsupportedTypeError for
// unmapped types.
std::unique_ptr<FetchColumn> MakeFetchColumn(const SqlType& type, std::string_view column,
                                             std::string label, const FetchOptions& options = {});

// Slots of a fixed-size C type, read directly by a reader (LSNs, operation, commit time).
template <typename T>
class FixedSlots final : public ResultSlots {
 public:
  explicit FixedSlots(SQLSMALLINT c_type) : c_type_(c_type) {}
  bool Bindable(const ColumnDescription&) const override { return true; }
  std::size_t SlotBytes(const ColumnDescription&) const override { return sizeof(T) + sizeof(SQLLEN); }
  void Allocate(const ColumnDescription&, std::size_t slots) override {
    values_.assign(slots, T{});
    indicators_.assign(slots, 0);
  }
  void Bind(const OdbcStatement& statement, SQLUSMALLINT column) override {
    statement.Check(SQLBindCol(statement.handle(), column, c_type_, values_.data(), sizeof(T),
                               indicators_.data()),
                    "SQLBindCol");
  }
  void Get(const OdbcStatement& statement, SQLUSMALLINT column) override {
    statement.Check(SQLGetData(statement.handle(), column, c_type_, values_.data(), sizeof(T),
                               indicators_.data()),
                    "SQLGetData");
  }
  bool IsNull(std::size_t slot) const { return indicators_[slot] == SQL_NULL_DATA; }
  // The value's length in bytes as the driver reported it (for binary values).
  SQLLEN Length(std::size_t slot) const { return indicators_[slot]; }
  const T& Value(std::size_t slot) const { return values_[slot]; }

 private:
  SQLSMALLINT c_type_;
  std::vector<T> values_;
  std::vector<SQLLEN> indicators_;
};

}  // namespace mssql_cdc::odbc
