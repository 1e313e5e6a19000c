#include "tds/column_codec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "core/user_text.h"
#include "tds/text_encoding.h"
#include "tds/tokens.h"
#include "tds/value_text.h"

namespace mssql_cdc::tds {
namespace {

constexpr std::int64_t kPow10[] = {1,         10,         100,         1000,
                                   10000,     100000,     1000000,     10000000,
                                   100000000, 1000000000, 10000000000, 100000000000};

// 1900-01-01, day 0 of datetime and smalldatetime, counted from 0001-01-01.
constexpr std::int32_t kDay1900 = 693595;
// 1753-01-01, the first day datetime holds, and 9999-12-31, the last day of every type.
constexpr std::int32_t kDay1753 = 639905;
constexpr std::int32_t kLastDay = 3652058;
constexpr std::int64_t kDateTimeTicksPerDay = 300LL * 86400;  // datetime counts 1/300 s

constexpr std::uint16_t kMaxLengthMarker = 0xFFFF;  // (max) types: values go as PLP

constexpr auto kPow10Wide = [] {
  std::array<unsigned __int128, 39> table{};
  table[0] = 1;
  for (std::size_t i = 1; i < table.size(); ++i) table[i] = table[i - 1] * 10;
  return table;
}();

unsigned __int128 Pow10Wide(int n) { return kPow10Wide[n]; }

std::uint8_t DecimalBytes(int precision) {
  if (precision <= 9) return 4;
  if (precision <= 19) return 8;
  if (precision <= 28) return 12;
  return 16;
}

std::uint8_t TimeBytes(int scale) { return scale <= 2 ? 3 : scale <= 4 ? 4 : 5; }

void PutUnsigned(std::uint8_t* p, unsigned __int128 v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    p[i] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

}  // namespace

ColumnCodec::ColumnCodec(const ResultColumn& column)
    : name_(column.name), type_text_(column.type.ToString()), nullable_(column.nullable) {
  const SqlType& t = column.type;
  using K = SqlTypeKind;
  const K kind = t.kind();
  max_length_ = t.max_length;
  precision_ = t.precision;
  scale_ = t.scale;
  auto unsent = [&] {
    return UnsupportedTypeError("column '" + name_ + "' has SQL Server type " + type_text_ +
                                ", which the TDS server cannot send");
  };
  switch (kind) {
    case K::kBit: wire_ = Wire::kBit; break;
    case K::kTinyInt: wire_ = Wire::kInt, width_ = 1; break;
    case K::kSmallInt: wire_ = Wire::kInt, width_ = 2; break;
    case K::kInt: wire_ = Wire::kInt, width_ = 4; break;
    case K::kBigInt: wire_ = Wire::kInt, width_ = 8; break;
    case K::kReal: wire_ = Wire::kReal; break;
    case K::kFloat:
      wire_ = t.max_length > 0 && t.max_length <= 24 ? Wire::kReal : Wire::kFloat;
      break;
    case K::kDecimal: case K::kNumeric:
      wire_ = Wire::kDecimal;
      numeric_ = kind == K::kNumeric;
      if (precision_ < 1 || precision_ > 38 || scale_ < 0 || scale_ > precision_) {
        throw UnsupportedTypeError("column '" + name_ + "' has type " + type_text_ +
                                   ": precision must be 1 to 38 and scale 0 to the precision");
      }
      width_ = DecimalBytes(precision_);
      break;
    case K::kMoney: wire_ = Wire::kMoney; break;
    case K::kSmallMoney: wire_ = Wire::kSmallMoney; break;
    case K::kDate: wire_ = Wire::kDate; break;
    case K::kTime: case K::kDateTime2: case K::kDateTimeOffset:
      wire_ = kind == K::kTime ? Wire::kTime : kind == K::kDateTime2 ? Wire::kDateTime2
                                                                     : Wire::kDateTimeOffset;
      if (scale_ < 0 || scale_ > 7) {
        throw UnsupportedTypeError("column '" + name_ + "' has type " + type_text_ +
                                   ": fractional-second precision must be 0 to 7");
      }
      width_ = TimeBytes(scale_);
      break;
    case K::kDateTime: wire_ = Wire::kDateTime; break;
    case K::kSmallDateTime: wire_ = Wire::kSmallDateTime; break;
    case K::kChar: case K::kVarChar:
      if (t.IsMax() || max_length_ > 8000) {
        wire_ = Wire::kVarCharMax;
      } else {
        wire_ = kind == K::kChar ? Wire::kChar : Wire::kVarChar;
      }
      break;
    case K::kText: wire_ = Wire::kVarCharMax; break;
    case K::kNChar: case K::kNVarChar:
      if (t.IsMax() || max_length_ > 4000) {
        wire_ = Wire::kNVarCharMax;
      } else {
        wire_ = kind == K::kNChar ? Wire::kNChar : Wire::kNVarChar;
      }
      break;
    case K::kNText: case K::kXml: wire_ = Wire::kNVarCharMax; break;
    case K::kBinary: case K::kVarBinary:
      if (t.IsMax() || max_length_ > 8000) {
        wire_ = Wire::kVarBinaryMax;
      } else {
        wire_ = kind == K::kBinary ? Wire::kBinary : Wire::kVarBinary;
      }
      break;
    case K::kImage: wire_ = Wire::kVarBinaryMax; break;
    case K::kTimestamp: case K::kRowVersion:
      wire_ = Wire::kBinary;
      max_length_ = 8;
      break;
    case K::kUniqueIdentifier: wire_ = Wire::kGuid; break;
    case K::kSqlVariant: case K::kGeography: case K::kGeometry: case K::kHierarchyId:
    case K::kUnknown:
      throw unsent();
  }
  if ((wire_ == Wire::kChar || wire_ == Wire::kVarChar || wire_ == Wire::kNChar ||
       wire_ == Wire::kNVarChar || wire_ == Wire::kBinary || wire_ == Wire::kVarBinary) &&
      max_length_ < 1) {
    throw UnsupportedTypeError("column '" + name_ + "' has type " + type_text_ +
                               " without a positive length");
  }
  switch (wire_) {
    case Wire::kDate: case Wire::kTime: case Wire::kDateTime2: case Wire::kDateTimeOffset:
    case Wire::kDateTime: case Wire::kSmallDateTime:
      parsed_from_text_ = true;
      break;
    default:
      break;
  }
}

void ColumnCodec::WriteMetadata(WireBuffer& out) const {
  out.PutU32(0);  // user type
  out.PutU16(nullable_ ? 0x0001 : 0x0000);
  WriteTypeInfo(out);
  std::size_t length_at = out.size();
  out.PutU8(0);
  std::size_t start = out.size();
  out.PutUtf16(name_);
  std::size_t units = (out.size() - start) / 2;
  if (units > 128) {  // a column name is a sysname: 128 characters at most
    out.Truncate(start + 256);
    units = 128;
  }
  out.data()[length_at] = static_cast<std::uint8_t>(units);
}

void ColumnCodec::WriteTypeInfo(WireBuffer& out) const {
  auto collation = [&] { out.PutBytes(kServerCollation); };
  switch (wire_) {
    case Wire::kInt:
      out.PutU8(0x26), out.PutU8(width_);
      break;
    case Wire::kBit:
      out.PutU8(0x68), out.PutU8(1);
      break;
    case Wire::kReal:
      out.PutU8(0x6D), out.PutU8(4);
      break;
    case Wire::kFloat:
      out.PutU8(0x6D), out.PutU8(8);
      break;
    case Wire::kDecimal:
      out.PutU8(numeric_ ? 0x6C : 0x6A);
      out.PutU8(static_cast<std::uint8_t>(1 + width_));
      out.PutU8(static_cast<std::uint8_t>(precision_));
      out.PutU8(static_cast<std::uint8_t>(scale_));
      break;
    case Wire::kMoney:
      out.PutU8(0x6E), out.PutU8(8);
      break;
    case Wire::kSmallMoney:
      out.PutU8(0x6E), out.PutU8(4);
      break;
    case Wire::kDate:
      out.PutU8(0x28);
      break;
    case Wire::kTime:
      out.PutU8(0x29), out.PutU8(static_cast<std::uint8_t>(scale_));
      break;
    case Wire::kDateTime2:
      out.PutU8(0x2A), out.PutU8(static_cast<std::uint8_t>(scale_));
      break;
    case Wire::kDateTimeOffset:
      out.PutU8(0x2B), out.PutU8(static_cast<std::uint8_t>(scale_));
      break;
    case Wire::kDateTime:
      out.PutU8(0x6F), out.PutU8(8);
      break;
    case Wire::kSmallDateTime:
      out.PutU8(0x6F), out.PutU8(4);
      break;
    case Wire::kChar:
      out.PutU8(0xAF), out.PutU16(static_cast<std::uint16_t>(max_length_)), collation();
      break;
    case Wire::kVarChar:
      out.PutU8(0xA7), out.PutU16(static_cast<std::uint16_t>(max_length_)), collation();
      break;
    case Wire::kVarCharMax:
      out.PutU8(0xA7), out.PutU16(kMaxLengthMarker), collation();
      break;
    case Wire::kNChar:
      out.PutU8(0xEF), out.PutU16(static_cast<std::uint16_t>(2 * max_length_)), collation();
      break;
    case Wire::kNVarChar:
      out.PutU8(0xE7), out.PutU16(static_cast<std::uint16_t>(2 * max_length_)), collation();
      break;
    case Wire::kNVarCharMax:
      out.PutU8(0xE7), out.PutU16(kMaxLengthMarker), collation();
      break;
    case Wire::kBinary:
      out.PutU8(0xAD), out.PutU16(static_cast<std::uint16_t>(max_length_));
      break;
    case Wire::kVarBinary:
      out.PutU8(0xA5), out.PutU16(static_cast<std::uint16_t>(max_length_));
      break;
    case Wire::kVarBinaryMax:
      out.PutU8(0xA5), out.PutU16(kMaxLengthMarker);
      break;
    case Wire::kGuid:
      out.PutU8(0x24), out.PutU8(16);
      break;
  }
}

void ColumnCodec::Reject(const std::string& why) const {
  throw SourceError("column '" + name_ + "' (" + type_text_ + "): " + why);
}

void ColumnCodec::WrongKind(const char* kind) const {
  Reject(std::string("cannot take a ") + kind + " value");
}

void ColumnCodec::Null(WireBuffer& out) const {
  if (!nullable_) Reject("NULL in a column declared NOT NULL");
  switch (wire_) {
    case Wire::kChar:
    case Wire::kVarChar:
    case Wire::kNChar:
    case Wire::kNVarChar:
    case Wire::kBinary:
    case Wire::kVarBinary:
      out.PutU16(0xFFFF);
      break;
    case Wire::kVarCharMax:
    case Wire::kNVarCharMax:
    case Wire::kVarBinaryMax:
      out.PutU64(kPlpNull);
      break;
    default:
      out.PutU8(0);  // every other type has a 1-byte length, 0 for NULL
      break;
  }
}

void ColumnCodec::Int(WireBuffer& out, std::int64_t value) const {
  switch (wire_) {
    case Wire::kInt: {
      bool fits = width_ == 8 ||
                  (width_ == 4 && value >= std::numeric_limits<std::int32_t>::min() &&
                   value <= std::numeric_limits<std::int32_t>::max()) ||
                  (width_ == 2 && value >= -32768 && value <= 32767) ||
                  (width_ == 1 && value >= 0 && value <= 255);
      if (!fits) Reject("value " + std::to_string(value) + " is out of range");
      std::uint8_t* p = out.Extend(1 + width_);
      p[0] = width_;
      // Little-endian, as the wire wants: the low `width_` bytes of the value.
      const auto bits = static_cast<std::uint64_t>(value);
      std::uint8_t bytes[8];
      for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(bits >> (8 * i));
      std::memcpy(p + 1, bytes, width_);
      return;
    }
    case Wire::kBit: {
      std::uint8_t* p = out.Extend(2);
      p[0] = 1;
      p[1] = value != 0 ? 1 : 0;
      return;
    }
    case Wire::kReal:
    case Wire::kFloat:
      Float(out, static_cast<double>(value));
      return;
    case Wire::kDecimal:
    case Wire::kMoney:
    case Wire::kSmallMoney: {
      const bool negative = value < 0;
      unsigned __int128 magnitude =
          negative ? static_cast<unsigned __int128>(-(value + 1)) + 1
                   : static_cast<unsigned __int128>(value);
      const int scale = wire_ == Wire::kDecimal ? scale_ : 4;
      if (wire_ == Wire::kDecimal && magnitude >= Pow10Wide(precision_ - scale_)) {
        Reject("value " + std::to_string(value) + " is out of range");
      }
      magnitude *= Pow10Wide(scale);
      if (wire_ == Wire::kDecimal) {
        PutScaledDecimal(out, negative, magnitude);
      } else {
        PutMoney(out, negative, magnitude);
      }
      return;
    }
    default:
      WrongKind("integer");
  }
}

void ColumnCodec::Float(WireBuffer& out, double value) const {
  if (wire_ == Wire::kFloat) {
    std::uint8_t* p = out.Extend(9);
    p[0] = 8;
    std::uint64_t bits;
    std::memcpy(&bits, &value, 8);
    WireBuffer::Store64(p + 1, bits);
    return;
  }
  if (wire_ == Wire::kReal) {
    float narrow = static_cast<float>(value);
    std::uint8_t* p = out.Extend(5);
    p[0] = 4;
    std::uint32_t bits;
    std::memcpy(&bits, &narrow, 4);
    WireBuffer::Store32(p + 1, bits);
    return;
  }
  WrongKind("floating-point");
}

void ColumnCodec::Text(WireBuffer& out, std::string_view value) const {
  if (!parsed_from_text_) {
    PutText(out, value);
    return;
  }
  if (has_last_ && value == last_text_) {
    out.PutBytes(last_encoding_);
    return;
  }
  const std::size_t start = out.size();
  PutText(out, value);
  last_text_.assign(value);
  last_encoding_.assign(reinterpret_cast<const char*>(out.data()) + start, out.size() - start);
  has_last_ = true;
}

void ColumnCodec::PutText(WireBuffer& out, std::string_view value) const {
  switch (wire_) {
    case Wire::kChar:
    case Wire::kVarChar:
    case Wire::kVarCharMax:
      PutCodePageText(out, value);
      return;
    case Wire::kNChar:
    case Wire::kNVarChar:
    case Wire::kNVarCharMax:
      PutUtf16Text(out, value);
      return;
    case Wire::kDecimal:
    case Wire::kMoney:
    case Wire::kSmallMoney: {
      const bool is_decimal = wire_ == Wire::kDecimal;
      bool negative;
      unsigned __int128 magnitude;
      switch (ParseScaledDecimal(value, is_decimal ? precision_ : 19, is_decimal ? scale_ : 4,
                                 &negative, &magnitude)) {
        case DecimalParse::kOk:
          break;
        case DecimalParse::kMalformed:
          Reject("value " + QuoteUserText(value) + " is not a decimal number");
        case DecimalParse::kTooManyDigits:
          Reject("value " + QuoteUserText(value) + " has more integer digits than the type holds");
        case DecimalParse::kInexact:
          Reject("value " + QuoteUserText(value) + " has more decimal places than the type holds");
      }
      if (is_decimal) {
        PutScaledDecimal(out, negative, magnitude);
      } else {
        PutMoney(out, negative, magnitude);
      }
      return;
    }
    case Wire::kDate: {
      std::int32_t days;
      if (!ParseDate(value, &days)) Reject("value " + QuoteUserText(value) + " is not a date");
      std::uint8_t* p = out.Extend(4);
      p[0] = 3;
      PutUnsigned(p + 1, static_cast<std::uint32_t>(days), 3);
      return;
    }
    case Wire::kTime: {
      std::int64_t ticks;
      if (!ParseTimeOfDay(value, &ticks)) Reject("value " + QuoteUserText(value) + " is not a time");
      const std::int64_t unit = kPow10[7 - scale_];
      std::int64_t units = (ticks + unit / 2) / unit;
      const std::int64_t day_units = 86400 * kPow10[scale_];
      if (units >= day_units) units -= day_units;  // rounding past midnight wraps, as in SQL
      std::uint8_t* p = out.Extend(1 + width_);
      p[0] = width_;
      PutUnsigned(p + 1, static_cast<std::uint64_t>(units), width_);
      return;
    }
    case Wire::kDateTime2:
    case Wire::kDateTimeOffset:
    case Wire::kDateTime:
    case Wire::kSmallDateTime:
      PutTimestamp(out, value);
      return;
    case Wire::kGuid: {
      std::uint8_t* p = out.Extend(17);
      if (!ParseGuid(value, p + 1)) {
        out.Truncate(out.size() - 17);
        Reject("value " + QuoteUserText(value) + " is not a uniqueidentifier");
      }
      p[0] = 16;
      return;
    }
    case Wire::kInt:
    case Wire::kBit: {
      std::int64_t v;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size()) {
        Reject("value " + QuoteUserText(value) + " is not an integer");
      }
      Int(out, v);
      return;
    }
    case Wire::kReal:
    case Wire::kFloat: {
      double v;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size()) {
        Reject("value " + QuoteUserText(value) + " is not a number");
      }
      Float(out, v);
      return;
    }
    default:
      WrongKind("text");
  }
}

void ColumnCodec::Binary(WireBuffer& out, std::string_view value) const {
  switch (wire_) {
    case Wire::kBinary:
    case Wire::kVarBinary:
    case Wire::kVarBinaryMax:
      PutBytes(out, value);
      return;
    default:
      WrongKind("binary");
  }
}

void ColumnCodec::PutScaledDecimal(WireBuffer& out, bool negative,
                                   unsigned __int128 magnitude) const {
  if (magnitude >= Pow10Wide(precision_)) Reject("value is out of range");
  std::uint8_t* p = out.Extend(2 + width_);
  p[0] = static_cast<std::uint8_t>(1 + width_);
  p[1] = negative ? 0 : 1;
  PutUnsigned(p + 2, magnitude, width_);
}

void ColumnCodec::PutMoney(WireBuffer& out, bool negative, unsigned __int128 magnitude) const {
  const unsigned __int128 limit = wire_ == Wire::kMoney
                                      ? static_cast<unsigned __int128>(1) << 63
                                      : static_cast<unsigned __int128>(1) << 31;
  // Two's complement reaches one further below zero than above.
  if (magnitude > limit || (!negative && magnitude == limit)) Reject("value is out of range");
  const std::int64_t scaled = negative ? static_cast<std::int64_t>(-magnitude)
                                       : static_cast<std::int64_t>(magnitude);
  if (wire_ == Wire::kSmallMoney) {
    std::uint8_t* p = out.Extend(5);
    p[0] = 4;
    WireBuffer::Store32(p + 1, static_cast<std::uint32_t>(scaled));
    return;
  }
  // money: the high 32 bits first, then the low 32 bits, each little-endian.
  std::uint8_t* p = out.Extend(9);
  p[0] = 8;
  const auto bits = static_cast<std::uint64_t>(scaled);
  WireBuffer::Store32(p + 1, static_cast<std::uint32_t>(bits >> 32));
  WireBuffer::Store32(p + 5, static_cast<std::uint32_t>(bits));
}

void ColumnCodec::PutTimestamp(WireBuffer& out, std::string_view value) const {
  Timestamp ts;
  if (!ParseTimestamp(value, &ts)) Reject("value " + QuoteUserText(value) + " is not a date and time");
  if (ts.has_offset && wire_ != Wire::kDateTimeOffset) {
    Reject("value " + QuoteUserText(value) + " has a UTC offset; the type has none");
  }
  std::int64_t days = ts.days;
  if (wire_ == Wire::kDateTime) {
    std::int64_t ticks = (ts.ticks * 3 + 50'000) / 100'000;  // 100 ns to 1/300 s, rounded
    if (ticks >= kDateTimeTicksPerDay) ticks -= kDateTimeTicksPerDay, ++days;
    if (days < kDay1753 || days > kLastDay) Reject("value " + QuoteUserText(value) + " is out of range");
    std::uint8_t* p = out.Extend(9);
    p[0] = 8;
    const auto days_since_1900 = static_cast<std::int32_t>(days - kDay1900);
    WireBuffer::Store32(p + 1, static_cast<std::uint32_t>(days_since_1900));
    WireBuffer::Store32(p + 5, static_cast<std::uint32_t>(ticks));
    return;
  }
  if (wire_ == Wire::kSmallDateTime) {
    std::int64_t minutes = (ts.ticks + 30 * kTicksPerSecond) / (60 * kTicksPerSecond);
    if (minutes >= 1440) minutes -= 1440, ++days;
    days -= kDay1900;
    if (days < 0 || days > 0xFFFF) Reject("value " + QuoteUserText(value) + " is out of range");
    std::uint8_t* p = out.Extend(5);
    p[0] = 4;
    WireBuffer::Store16(p + 1, static_cast<std::uint16_t>(days));
    WireBuffer::Store16(p + 3, static_cast<std::uint16_t>(minutes));
    return;
  }
  // datetime2 and datetimeoffset: units of 10^-scale s since midnight, then days since
  // 0001-01-01; datetimeoffset holds the UTC time and the offset.
  const std::int64_t unit = kPow10[7 - scale_];
  const std::int64_t day_units = 86400 * kPow10[scale_];
  std::int64_t units = (ts.ticks + unit / 2) / unit;
  if (wire_ == Wire::kDateTimeOffset) units -= ts.offset_minutes * 60 * kPow10[scale_];
  while (units < 0) units += day_units, --days;
  while (units >= day_units) units -= day_units, ++days;
  if (days < 0 || days > kLastDay) Reject("value " + QuoteUserText(value) + " is out of range");
  const bool with_offset = wire_ == Wire::kDateTimeOffset;
  const int length = width_ + 3 + (with_offset ? 2 : 0);
  std::uint8_t* p = out.Extend(1 + length);
  p[0] = static_cast<std::uint8_t>(length);
  PutUnsigned(p + 1, static_cast<std::uint64_t>(units), width_);
  PutUnsigned(p + 1 + width_, static_cast<std::uint32_t>(days), 3);
  if (with_offset) {
    WireBuffer::Store16(p + 4 + width_, static_cast<std::uint16_t>(ts.offset_minutes));
  }
}

void ColumnCodec::PutCodePageText(WireBuffer& out, std::string_view value) const {
  const std::size_t start = out.size();
  const bool plp = wire_ == Wire::kVarCharMax;
  const std::size_t header = plp ? 12 : 2;
  std::size_t room = value.size();
  if (wire_ == Wire::kChar) room = std::max<std::size_t>(room, max_length_);
  std::uint8_t* p = out.Extend(header + room + (plp ? 4 : 0));
  std::ptrdiff_t length = Utf8ToCp1252(value, p + header);
  if (length < 0) {
    out.Truncate(start);
    Reject("value " + QuoteUserText(value) + " is not valid UTF-8");
  }
  if (!plp && length > max_length_) {
    out.Truncate(start);
    Reject("value of " + std::to_string(length) + " bytes is longer than the column");
  }
  if (wire_ == Wire::kChar && length < max_length_) {
    std::memset(p + header + length, ' ', max_length_ - length);
    length = max_length_;
  }
  if (!plp) {
    WireBuffer::Store16(p, static_cast<std::uint16_t>(length));
    out.Truncate(start + header + length);
    return;
  }
  WireBuffer::Store64(p, static_cast<std::uint64_t>(length));
  if (length == 0) {
    WireBuffer::Store32(p + 8, 0);  // no chunk, only the terminator
    out.Truncate(start + 12);
    return;
  }
  WireBuffer::Store32(p + 8, static_cast<std::uint32_t>(length));
  WireBuffer::Store32(p + header + length, 0);
  out.Truncate(start + header + length + 4);
}

void ColumnCodec::PutUtf16Text(WireBuffer& out, std::string_view value) const {
  const std::size_t start = out.size();
  const bool plp = wire_ == Wire::kNVarCharMax;
  const std::size_t header = plp ? 12 : 2;
  std::size_t room = 2 * value.size();
  if (wire_ == Wire::kNChar) room = std::max<std::size_t>(room, 2 * max_length_);
  std::uint8_t* p = out.Extend(header + room + (plp ? 4 : 0));
  std::ptrdiff_t length = Utf8ToUtf16(value, p + header);
  if (length < 0) {
    out.Truncate(start);
    Reject("value " + QuoteUserText(value) + " is not valid UTF-8");
  }
  if (!plp && length > 2 * max_length_) {
    out.Truncate(start);
    Reject("value of " + std::to_string(length / 2) +
           " UTF-16 code units is longer than the column");
  }
  if (wire_ == Wire::kNChar) {
    for (; length < 2 * max_length_; length += 2) {
      p[header + length] = ' ';
      p[header + length + 1] = 0;
    }
  }
  if (!plp) {
    WireBuffer::Store16(p, static_cast<std::uint16_t>(length));
    out.Truncate(start + header + length);
    return;
  }
  WireBuffer::Store64(p, static_cast<std::uint64_t>(length));
  if (length == 0) {
    WireBuffer::Store32(p + 8, 0);
    out.Truncate(start + 12);
    return;
  }
  WireBuffer::Store32(p + 8, static_cast<std::uint32_t>(length));
  WireBuffer::Store32(p + header + length, 0);
  out.Truncate(start + header + length + 4);
}

void ColumnCodec::PutBytes(WireBuffer& out, std::string_view value) const {
  if (wire_ == Wire::kVarBinaryMax) {
    if (value.size() > 0xFFFFFFFFu) Reject("value is longer than a PLP chunk");
    std::uint8_t* p = out.Extend(8 + (value.empty() ? 0 : 4 + value.size()) + 4);
    WireBuffer::Store64(p, value.size());
    p += 8;
    if (!value.empty()) {
      WireBuffer::Store32(p, static_cast<std::uint32_t>(value.size()));
      std::memcpy(p + 4, value.data(), value.size());
      p += 4 + value.size();
    }
    WireBuffer::Store32(p, 0);
    return;
  }
  if (value.size() > static_cast<std::size_t>(max_length_)) {
    Reject("value of " + std::to_string(value.size()) + " bytes is longer than the column");
  }
  const std::size_t length = wire_ == Wire::kBinary ? max_length_ : value.size();
  std::uint8_t* p = out.Extend(2 + length);
  WireBuffer::Store16(p, static_cast<std::uint16_t>(length));
  if (!value.empty()) std::memcpy(p + 2, value.data(), value.size());
  if (length > value.size()) std::memset(p + 2 + value.size(), 0, length - value.size());
}

}  // namespace mssql_cdc::tds
