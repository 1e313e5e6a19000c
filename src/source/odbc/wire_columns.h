// Result columns read straight off the TDS wire into Arrow, for the engine's own change reader
// (tds_change_reader.h): a column's TYPE_INFO from COLMETADATA, and per column a decoder that
// appends each value of a ROW or NBCROW to an Arrow array of the output schema's type.
//
// The values come out as the ODBC backend's ChangeReader makes them, type for type: integers,
// floats and bit as they are; decimal, numeric, money and smallmoney as decimal128 at the
// captured scale; date as date32; datetime, smalldatetime and datetime2 as microseconds
// (datetime's 1/300 s ticks rounded to the millisecond, as drivers and SQL Server show them);
// datetimeoffset as microseconds in UTC; time as "HH:MM:SS.fffffff"; uniqueidentifier as upper
// case 8-4-4-4-12; char types converted from their collation's code page (Windows-1252 or
// UTF-8; others are left to the driver) and nchar types from UTF-16 to UTF-8; binary types as
// they are. A wire type a captured column cannot come as is refused before any row is read.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "source/source.h"
#include "tds/client_connection.h"

namespace mssql_cdc::odbc {

// A column's TYPE_INFO as COLMETADATA describes it.
// How a value of a type is delimited in a row: fixed width, a 1-, 2- or 4-byte length (the
// last after a text pointer), or PLP chunks.
enum class Framing : std::uint8_t { kFixed, kByteLen, kUShortLen, kPlp, kLongLen };

struct WireType {
  std::uint8_t type = 0;  // the TDS type byte (0x26 INTN, 0xE7 NVARCHAR, ...)
  std::uint32_t length = 0;  // the max length or size the TYPE_INFO gives, 0xFFFF for (max)
  std::uint8_t precision = 0;
  std::uint8_t scale = 0;
  std::uint8_t collation[5] = {};
  bool has_collation = false;
  Framing framing = Framing::kByteLen;  // from the fields above, set by ReadTypeInfo
};

// Reads one column's TYPE_INFO (after its UserType and Flags). ClientFailure (kProtocol) for a
// type this reader does not know.
WireType ReadTypeInfo(tds::ReplyStream& in);

// The code page of a char column's collation: 1252, 65001 (UTF-8), or 0 when it is another.
int CodePageOf(const WireType& type);

class WireColumn {
 public:
  virtual ~WireColumn() = default;
  // Reads one value (NULL included) and appends it.
  virtual void Read(tds::ReplyStream& in) = 0;
  // Appends NULL (an NBCROW's bitmap said so; nothing is on the wire).
  virtual void AppendNull() = 0;
  virtual std::shared_ptr<arrow::Array> Finish() = 0;
  // Makes room for `rows` more values, and for as many bytes of text or binary as the last
  // batch held (at most a batch's byte limit), so that a batch like the last one is built
  // without growing its buffers value by value.
  virtual void Reserve(std::int64_t rows) = 0;
  // Bytes of text and binary values since the last Finish.
  virtual std::int64_t data_bytes() const { return 0; }
};

// Thrown when a result column comes as a wire type (or code page) this reader does not turn
// into the captured column's Arrow type: the ODBC driver reads such a result instead.
class WireTypeUnsupported : public SourceError {
 public:
  using SourceError::SourceError;
};

// The decoder of `captured` arriving as `wire`. WireTypeUnsupported when they do not match.
std::unique_ptr<WireColumn> MakeWireColumn(const CapturedColumn& captured, const WireType& wire);

// The decoders of the metadata columns, which the reader reads into its own slots: binary(10)
// LSNs, int operation and command id, datetime commit time.
// Reads a binary(10) value; false for NULL. ClientFailure for another length.
bool ReadLsnValue(tds::ReplyStream& in, const WireType& wire, std::uint8_t* out);
// Reads an int value; false for NULL.
bool ReadIntValue(tds::ReplyStream& in, const WireType& wire, std::int32_t* out);
// Reads a datetime (or datetime2) value as local microseconds since the epoch; false for NULL.
bool ReadDateTimeValue(tds::ReplyStream& in, const WireType& wire, std::int64_t* micros);

// Skips a value of `wire` (for rows passed over after a retry).
void SkipValue(tds::ReplyStream& in, const WireType& wire);

}  // namespace mssql_cdc::odbc
