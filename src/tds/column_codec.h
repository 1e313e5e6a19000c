// How one result column travels: its TYPE_INFO in COLMETADATA and the encoding of each of
// its values in a ROW, chosen once per result set from the column's SqlType.
//
// Every type of the engine's mapping has a wire form: integers and bit as INTN/BITN, real
// and float as FLTN, decimal/numeric as DECIMALN/NUMERICN, money and smallmoney as MONEYN,
// date/time/datetime2/datetimeoffset as their TDS 7.3 types, datetime and smalldatetime as
// DATETIMN, char types as BIGCHAR/BIGVARCHAR (Windows-1252) and NCHAR/NVARCHAR (UTF-16),
// binary types as BIGBINARY/BIGVARBINARY, uniqueidentifier as GUID. The (max) types go as
// PLP. The legacy large types are sent as their (max) successors, as SQL Server does for
// TDS 7.2+ clients asking for them with CAST: text as varchar(max), ntext and xml as
// nvarchar(max), image as varbinary(max). timestamp/rowversion is binary(8).
//
// Fixed-length char and binary values shorter than the column are padded (spaces, zeros),
// as SQL Server stores them. A value that does not fit its column (out of range, too long,
// malformed text, the wrong kind) throws SourceError naming the column and leaves the
// buffer as it was.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tds/query_handler.h"
#include "tds/wire_buffer.h"

namespace mssql_cdc::tds {

class ColumnCodec {
 public:
  // Throws UnsupportedTypeError naming the column for a type without a wire form here
  // (sql_variant, geography, ...).
  explicit ColumnCodec(const ResultColumn& column);

  const std::string& name() const { return name_; }
  bool nullable() const { return nullable_; }

  // UserType, Flags, TYPE_INFO and ColName of this column's COLMETADATA entry.
  void WriteMetadata(WireBuffer& out) const;

  // The value forms of query_handler.h's ResultSet, each appending one complete value.
  void Null(WireBuffer& out) const;
  void Int(WireBuffer& out, std::int64_t value) const;
  void Float(WireBuffer& out, double value) const;
  void Text(WireBuffer& out, std::string_view value) const;
  void Binary(WireBuffer& out, std::string_view value) const;

 private:
  enum class Wire : std::uint8_t {
    kInt, kBit, kReal, kFloat, kDecimal, kMoney, kSmallMoney,
    kDate, kTime, kDateTime2, kDateTimeOffset, kDateTime, kSmallDateTime,
    kChar, kVarChar, kVarCharMax, kNChar, kNVarChar, kNVarCharMax,
    kBinary, kVarBinary, kVarBinaryMax, kGuid,
  };

  void WriteTypeInfo(WireBuffer& out) const;
  void PutText(WireBuffer& out, std::string_view value) const;
  void PutScaledDecimal(WireBuffer& out, bool negative, unsigned __int128 magnitude) const;
  void PutMoney(WireBuffer& out, bool negative, unsigned __int128 magnitude) const;
  void PutTimestamp(WireBuffer& out, std::string_view value) const;
  void PutCodePageText(WireBuffer& out, std::string_view value) const;
  void PutUtf16Text(WireBuffer& out, std::string_view value) const;
  void PutBytes(WireBuffer& out, std::string_view value) const;
  [[noreturn]] void Reject(const std::string& why) const;
  [[noreturn]] void WrongKind(const char* kind) const;

  std::string name_;
  std::string type_text_;  // for messages: "decimal(18,4)"
  Wire wire_;
  bool nullable_;
  std::uint8_t width_ = 0;         // INTN bytes; DECIMALN magnitude bytes; time bytes
  int max_length_ = 0;             // characters or bytes of the non-max char/binary types
  int precision_ = 0;
  int scale_ = 0;
  bool numeric_ = false;           // NUMERICN rather than DECIMALN
  // Dates and times arrive as text to parse. The last one's encoding is kept: a value often
  // repeats down a column (every row of a commit has its commit time), and parsing is most of
  // its cost.
  bool parsed_from_text_ = false;
  mutable bool has_last_ = false;
  mutable std::string last_text_;
  mutable std::string last_encoding_;
};

}  // namespace mssql_cdc::tds
