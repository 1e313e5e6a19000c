#include "source/odbc/wire_columns.h"

#include <arrow/api.h>
#include <arrow/util/decimal.h>

#include <cstring>
#include <string_view>
#include <type_traits>

#include "core/errors.h"
#include "core/sql_type.h"
#include "core/time.h"
#include "source/odbc/utf16.h"
#include "source/odbc/value_formats.h"
#include "tds/text_encoding.h"

namespace mssql_cdc::odbc {
namespace {

using tds::ClientFailure;
using tds::ReplyStream;

constexpr std::uint32_t kMaxMarker = 0xFFFF;
constexpr std::uint64_t kPlpNull = ~0ULL;
// Days from 0001-01-01 (date, datetime2) and from 1900-01-01 (datetime) to 1970-01-01.
constexpr std::int64_t kDaysFrom0001 = 719162;
constexpr std::int64_t kDaysFrom1900 = 25567;

std::size_t FixedSize(std::uint8_t type) {
  switch (type) {
    case 0x30: case 0x32: return 1;                          // INT1, BIT
    case 0x34: return 2;                                     // INT2
    case 0x38: case 0x3A: case 0x3B: case 0x7A: return 4;    // INT4, DATETIM4, FLT4, MONEY4
    case 0x3C: case 0x3D: case 0x3E: case 0x7F: return 8;    // MONEY, DATETIME, FLT8, INT8
    default: return 0;
  }
}

Framing FramingOf(const WireType& w) {
  if (FixedSize(w.type) != 0) return Framing::kFixed;
  switch (w.type) {
    case 0xA5: case 0xA7: case 0xAD: case 0xAF: case 0xE7: case 0xEF:
      return w.length == kMaxMarker ? Framing::kPlp : Framing::kUShortLen;
    case 0xF1: return Framing::kPlp;
    case 0x22: case 0x23: case 0x63: return Framing::kLongLen;
    default: return Framing::kByteLen;
  }
}

[[noreturn]] void Unsupported(const CapturedColumn& c, const WireType& w) {
  char hex[5];
  std::snprintf(hex, sizeof hex, "0x%02X", w.type);
  throw WireTypeUnsupported("column '" + c.name + "' (" + c.type.ToString() +
                            ") came as TDS type " + hex + ", which the engine's reader does not "
                            "read as that type");
}

// The bytes of a value that is not PLP; null for NULL. Valid until the stream reads again.
const std::uint8_t* ValueBytes(ReplyStream& in, const WireType& w, std::size_t* length) {
  switch (w.framing) {
    case Framing::kFixed:
      *length = FixedSize(w.type);
      break;
    case Framing::kByteLen:
      *length = in.U8();
      if (*length == 0) return nullptr;
      break;
    case Framing::kUShortLen: {
      const std::uint16_t n = in.U16();
      if (n == 0xFFFF) return nullptr;
      *length = n;
      break;
    }
    case Framing::kLongLen: {
      const std::uint8_t pointer = in.U8();
      if (pointer == 0) return nullptr;
      in.Skip(pointer + 8u);  // text pointer, timestamp
      *length = in.U32();
      break;
    }
    case Framing::kPlp:
      throw ClientFailure(ClientFailure::Kind::kProtocol, "a PLP value read as a short one");
  }
  const std::uint8_t* p = in.Need(*length);
  in.Advance(*length);
  return p;
}

// A PLP value into `out`; false for NULL.
bool ReadPlp(ReplyStream& in, std::string* out) {
  const std::uint64_t total = in.U64();
  if (total == kPlpNull) return false;
  out->clear();
  for (;;) {
    const std::uint32_t chunk = in.U32();
    if (chunk == 0) return true;
    const std::uint8_t* p = in.Need(chunk);
    out->append(reinterpret_cast<const char*>(p), chunk);
    in.Advance(chunk);
  }
}

std::int64_t LittleEndian(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ULL << (8 * n);  // sign-extend
  return static_cast<std::int64_t>(v);
}

std::uint64_t UnsignedLittleEndian(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::int64_t Pow10(int n) {
  std::int64_t v = 1;
  while (n-- > 0) v *= 10;
  return v;
}

// A datetime or smalldatetime value as microseconds: ticks of 1/300 s rounded to the
// millisecond, as drivers and SQL Server present them.
std::int64_t DateTimeMicros(const std::uint8_t* p, std::size_t length) {
  if (length == 4) {
    const std::int64_t days = static_cast<std::int64_t>(UnsignedLittleEndian(p, 2));
    const std::int64_t minutes = static_cast<std::int64_t>(UnsignedLittleEndian(p + 2, 2));
    return (days - kDaysFrom1900) * kMicrosPerDay + minutes * kMicrosPerMinute;
  }
  const std::int64_t days = LittleEndian(p, 4);
  const std::int64_t ticks = static_cast<std::int64_t>(UnsignedLittleEndian(p + 4, 4));
  const std::int64_t millis = ((ticks % 300) * 1000 + 150) / 300;
  return (days - kDaysFrom1900) * kMicrosPerDay + (ticks / 300) * kMicrosPerSecond + millis * 1000;
}

std::size_t TimeBytes(int scale) { return scale <= 2 ? 3 : scale <= 4 ? 4 : 5; }

// The time of day of a time, datetime2 or datetimeoffset value, in units of 10^-scale s, as
// microseconds (digits past the sixth cut, as drivers do).
std::int64_t TimeMicros(const std::uint8_t* p, int scale) {
  const auto units = static_cast<std::int64_t>(UnsignedLittleEndian(p, TimeBytes(scale)));
  return scale <= 6 ? units * Pow10(6 - scale) : units / Pow10(scale - 6);
}

std::int64_t DateTime2Micros(const std::uint8_t* p, int scale) {
  const std::size_t time = TimeBytes(scale);
  const auto days = static_cast<std::int64_t>(UnsignedLittleEndian(p + time, 3));
  return (days - kDaysFrom0001) * kMicrosPerDay + TimeMicros(p, scale);
}

bool IsOneOf(std::uint8_t type, std::initializer_list<std::uint8_t> types) {
  for (auto t : types) {
    if (t == type) return true;
  }
  return false;
}

void Check(const arrow::Status& status, const std::string& label) {
  if (!status.ok()) throw SourceError(label + ": " + status.ToString());
}

// ---- decoders

template <typename Builder>
class BuilderColumn : public WireColumn {
 public:
  BuilderColumn(std::shared_ptr<arrow::DataType> type, WireType wire, std::string label)
      : builder_(std::move(type), arrow::default_memory_pool()), wire_(wire), label_(std::move(label)) {}
  void AppendNull() override { Check(builder_.AppendNull(), label_); }
  std::shared_ptr<arrow::Array> Finish() override {
    if constexpr (std::is_base_of_v<arrow::BaseBinaryBuilder<arrow::BinaryType>, Builder>) {
      last_data_bytes_ = builder_.value_data_length();
    }
    std::shared_ptr<arrow::Array> out;
    Check(builder_.Finish(&out), label_);
    return out;
  }
  void Reserve(std::int64_t rows) override {
    Check(builder_.Reserve(rows), label_);
    if constexpr (std::is_base_of_v<arrow::BaseBinaryBuilder<arrow::BinaryType>, Builder>) {
      Check(builder_.ReserveData(last_data_bytes_), label_);
    }
  }

 protected:
  Builder builder_;
  WireType wire_;
  std::string label_;
  std::int64_t last_data_bytes_ = 0;
};

// Values of fixed width: `Convert(bytes, length)` gives the Arrow value.
template <typename Builder, typename Convert>
class FixedColumn final : public BuilderColumn<Builder> {
 public:
  FixedColumn(std::shared_ptr<arrow::DataType> type, WireType wire, std::string label, Convert convert)
      : BuilderColumn<Builder>(std::move(type), wire, std::move(label)), convert_(std::move(convert)) {}
  void Read(ReplyStream& in) override {
    std::size_t length = 0;
    const std::uint8_t* p = ValueBytes(in, this->wire_, &length);
    if (p == nullptr) return this->AppendNull();
    Check(this->builder_.Append(convert_(p, length)), this->label_);
  }

 private:
  Convert convert_;
};

template <typename Builder, typename Convert>
std::unique_ptr<WireColumn> MakeFixed(std::shared_ptr<arrow::DataType> type, const WireType& wire,
                                      std::string label, Convert convert) {
  return std::make_unique<FixedColumn<Builder, Convert>>(std::move(type), wire, std::move(label),
                                                         std::move(convert));
}

// Decimal values at the captured precision and scale from decimal/numeric (sign byte, then
// the magnitude) or money (1/10000 units).
class DecimalColumn final : public BuilderColumn<arrow::Decimal128Builder> {
 public:
  DecimalColumn(std::shared_ptr<arrow::DataType> type, WireType wire, std::string label)
      : BuilderColumn(type, wire, std::move(label)) {
    const auto& d = static_cast<const arrow::Decimal128Type&>(*type);
    precision_ = d.precision();
    scale_ = d.scale();
    for (int i = 0; i < precision_; ++i) limit_ *= 10;
    money_ = IsOneOf(wire.type, {0x3C, 0x7A, 0x6E});
  }
  void Read(ReplyStream& in) override {
    std::size_t length = 0;
    const std::uint8_t* p = ValueBytes(in, wire_, &length);
    if (p == nullptr) return AppendNull();
    bool negative = false;
    unsigned __int128 magnitude = 0;
    int from_scale = 4;
    if (money_) {  // money: 8 bytes high-then-low, or 4
      std::int64_t units = length == 4 ? LittleEndian(p, 4)
                                       : static_cast<std::int64_t>(
                                             (static_cast<std::uint64_t>(UnsignedLittleEndian(p, 4)) << 32) |
                                             UnsignedLittleEndian(p + 4, 4));
      negative = units < 0;
      magnitude = negative ? static_cast<unsigned __int128>(-(static_cast<__int128>(units)))
                           : static_cast<unsigned __int128>(units);
    } else {
      negative = p[0] == 0;
      for (std::size_t i = length; i > 1; --i) magnitude = (magnitude << 8) | p[i - 1];
      from_scale = wire_.scale;
    }
    bool fits = true;
    for (; fits && from_scale < scale_; ++from_scale) {
      fits = magnitude <= ~static_cast<unsigned __int128>(0) / 10;
      magnitude *= 10;
    }
    for (; fits && from_scale > scale_; --from_scale) {
      fits = magnitude % 10 == 0;
      magnitude /= 10;
    }
    if (!fits || magnitude >= limit_) {
      throw SourceError(label_ + " holds a value that does not fit decimal(" +
                        std::to_string(precision_) + "," + std::to_string(scale_) +
                        "), the type the column was captured with");
    }
    const auto high = static_cast<std::int64_t>(magnitude >> 64);
    const auto low = static_cast<std::uint64_t>(magnitude);
    arrow::Decimal128 value(high, low);
    if (negative) value.Negate();
    Check(builder_.Append(value), label_);
  }

 private:
  int precision_ = 0;
  int scale_ = 0;
  unsigned __int128 limit_ = 1;  // 10^precision
  bool money_ = false;
};

// Text: a char column's bytes in its code page, or an nchar column's UTF-16, as UTF-8.
class TextColumn final : public BuilderColumn<arrow::StringBuilder> {
 public:
  TextColumn(WireType wire, std::string label, bool utf16, int code_page)
      : BuilderColumn(arrow::utf8(), wire, std::move(label)), utf16_(utf16), code_page_(code_page),
        plp_(FramingOf(wire) == Framing::kPlp) {}
  void Read(ReplyStream& in) override {
    if (plp_) {
      if (!ReadPlp(in, &piece_)) return AppendNull();
      return Append(reinterpret_cast<const std::uint8_t*>(piece_.data()), piece_.size());
    }
    std::size_t length = 0;
    const std::uint8_t* p = ValueBytes(in, wire_, &length);
    if (p == nullptr) return AppendNull();
    Append(p, length);
  }
  std::int64_t data_bytes() const override { return builder_.value_data_length(); }

 private:
  void Append(const std::uint8_t* p, std::size_t length) {
    if (utf16_) {
      const std::size_t units = length / 2;
      scratch_.resize(MaxUtf8Bytes(units));
      const std::size_t n = Utf16LeToUtf8(p, units, scratch_.data());
      Check(builder_.Append(scratch_.data(), static_cast<std::int32_t>(n)), label_);
      return;
    }
    if (code_page_ == 1252) {
      bool ascii = true;
      for (std::size_t i = 0; ascii && i < length; ++i) ascii = p[i] < 0x80;
      if (!ascii) {
        const std::string utf8 =
            tds::Cp1252ToUtf8(std::string_view(reinterpret_cast<const char*>(p), length));
        Check(builder_.Append(utf8), label_);
        return;
      }
    }
    Check(builder_.Append(p, static_cast<std::int32_t>(length)), label_);
  }

  bool utf16_;
  int code_page_;
  bool plp_;
  std::string piece_;
  std::string scratch_;
};

class BinaryColumn final : public BuilderColumn<arrow::BinaryBuilder> {
 public:
  BinaryColumn(WireType wire, std::string label)
      : BuilderColumn(arrow::binary(), wire, std::move(label)), plp_(FramingOf(wire) == Framing::kPlp) {}
  void Read(ReplyStream& in) override {
    if (plp_) {
      if (!ReadPlp(in, &piece_)) return AppendNull();
      Check(builder_.Append(piece_), label_);
      return;
    }
    std::size_t length = 0;
    const std::uint8_t* p = ValueBytes(in, wire_, &length);
    if (p == nullptr) return AppendNull();
    Check(builder_.Append(p, static_cast<std::int32_t>(length)), label_);
  }
  std::int64_t data_bytes() const override { return builder_.value_data_length(); }

 private:
  bool plp_;
  std::string piece_;
};

// Values printed as text of a fixed width: time and uniqueidentifier.
template <std::size_t kChars, typename Format>
class FormattedColumn final : public BuilderColumn<arrow::StringBuilder> {
 public:
  FormattedColumn(WireType wire, std::string label, Format format)
      : BuilderColumn(arrow::utf8(), wire, std::move(label)), format_(std::move(format)) {}
  void Read(ReplyStream& in) override {
    std::size_t length = 0;
    const std::uint8_t* p = ValueBytes(in, wire_, &length);
    if (p == nullptr) return AppendNull();
    char text[kChars];
    format_(p, length, text);
    Check(builder_.Append(text, static_cast<std::int32_t>(kChars)), label_);
  }

 private:
  Format format_;
};

template <std::size_t kChars, typename Format>
std::unique_ptr<WireColumn> MakeFormatted(const WireType& wire, std::string label, Format format) {
  return std::make_unique<FormattedColumn<kChars, Format>>(wire, std::move(label), std::move(format));
}

}  // namespace

namespace {
// The TYPE_INFO's fields as they come; ReadTypeInfo adds the framing.
WireType ReadTypeInfoFields(ReplyStream& in) {
  WireType w;
  w.type = in.U8();
  if (FixedSize(w.type) != 0 || w.type == 0x1F) return w;
  auto collation = [&] {
    const std::uint8_t* p = in.Need(5);
    std::memcpy(w.collation, p, 5);
    in.Advance(5);
    w.has_collation = true;
  };
  switch (w.type) {
    case 0x26: case 0x68: case 0x6D: case 0x6E: case 0x6F: case 0x24:
      w.length = in.U8();
      return w;
    case 0x6A: case 0x6C: case 0x37: case 0x3F:
      w.length = in.U8();
      w.precision = in.U8();
      w.scale = in.U8();
      return w;
    case 0x28:
      return w;
    case 0x29: case 0x2A: case 0x2B:
      w.scale = in.U8();
      return w;
    case 0xA5: case 0xAD:
      w.length = in.U16();
      return w;
    case 0xA7: case 0xAF: case 0xE7: case 0xEF:
      w.length = in.U16();
      collation();
      return w;
    case 0x23: case 0x63:
      w.length = in.U32();
      collation();
      return w;
    case 0x22:
      w.length = in.U32();
      return w;
    case 0xF1:
      w.length = kMaxMarker;
      if (in.U8() != 0) {  // an XML schema collection: its names
        in.BVarChar();
        in.BVarChar();
        in.UsVarChar();
      }
      return w;
    default: {
      char hex[5];
      std::snprintf(hex, sizeof hex, "0x%02X", w.type);
      throw WireTypeUnsupported(std::string("a result column of TDS type ") + hex +
                                ", which the engine's reader does not read");
    }
  }
}
}  // namespace

WireType ReadTypeInfo(ReplyStream& in) {
  WireType w = ReadTypeInfoFields(in);
  w.framing = FramingOf(w);
  return w;
}

int CodePageOf(const WireType& type) {
  const std::uint32_t info = static_cast<std::uint32_t>(type.collation[0]) |
                             (static_cast<std::uint32_t>(type.collation[1]) << 8) |
                             (static_cast<std::uint32_t>(type.collation[2]) << 16) |
                             (static_cast<std::uint32_t>(type.collation[3]) << 24);
  if ((info >> 26) & 1) return 65001;  // fUTF8: a _UTF8 collation
  const std::uint32_t lcid = info & 0xFFFFF;
  const std::uint8_t sort_id = type.collation[4];
  if (sort_id != 0) {
    // SQL collations: SQL_Latin1_General_CP1_CS_AS (51), _CI_AS (52), _Pref_CI_AS (53),
    // _CI_AI (54).
    return sort_id >= 51 && sort_id <= 54 ? 1252 : 0;
  }
  switch (lcid) {
    // Windows collations of languages written in Windows-1252.
    case 0x0409: case 0x0809: case 0x0C09: case 0x1009: case 0x1409: case 0x1809:
    case 0x0407: case 0x0807: case 0x0C07: case 0x040C: case 0x080C: case 0x0C0C:
    case 0x100C: case 0x0410: case 0x0810: case 0x040A: case 0x080A: case 0x0C0A:
    case 0x0413: case 0x0813: case 0x0416: case 0x0816: case 0x041D: case 0x0414:
    case 0x0814: case 0x0406: case 0x040B: case 0x040F: case 0x0421: case 0x0436:
    case 0x042D: case 0x0403:
      return 1252;
    default:
      return 0;
  }
}

std::unique_ptr<WireColumn> MakeWireColumn(const CapturedColumn& captured, const WireType& wire) {
  const std::shared_ptr<arrow::DataType> type = ArrowTypeFor(captured.type, captured.name);
  const std::string label = "column '" + captured.name + "'";
  const SqlTypeKind kind = captured.type.kind();
  const std::uint8_t t = wire.type;
  switch (type->id()) {
    case arrow::Type::BOOL:
      if (!IsOneOf(t, {0x32, 0x68})) Unsupported(captured, wire);
      return MakeFixed<arrow::BooleanBuilder>(type, wire, label,
                                              [](const std::uint8_t* p, std::size_t) { return p[0] != 0; });
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64: {
      if (!IsOneOf(t, {0x30, 0x34, 0x38, 0x7F, 0x26})) Unsupported(captured, wire);
      // tinyint is the one unsigned integer.
      auto value = [](const std::uint8_t* p, std::size_t n) {
        return n == 1 ? static_cast<std::int64_t>(p[0]) : LittleEndian(p, n);
      };
      if (type->id() == arrow::Type::INT16) {
        return MakeFixed<arrow::Int16Builder>(type, wire, label, [value](const std::uint8_t* p, std::size_t n) {
          return static_cast<std::int16_t>(value(p, n));
        });
      }
      if (type->id() == arrow::Type::INT32) {
        return MakeFixed<arrow::Int32Builder>(type, wire, label, [value](const std::uint8_t* p, std::size_t n) {
          return static_cast<std::int32_t>(value(p, n));
        });
      }
      return MakeFixed<arrow::Int64Builder>(type, wire, label, value);
    }
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE: {
      if (!IsOneOf(t, {0x3B, 0x3E, 0x6D})) Unsupported(captured, wire);
      auto value = [](const std::uint8_t* p, std::size_t n) {
        if (n == 4) {
          float f;
          std::memcpy(&f, p, 4);
          return static_cast<double>(f);
        }
        double d;
        std::memcpy(&d, p, 8);
        return d;
      };
      if (type->id() == arrow::Type::FLOAT) {
        return MakeFixed<arrow::FloatBuilder>(type, wire, label, [value](const std::uint8_t* p, std::size_t n) {
          return static_cast<float>(value(p, n));
        });
      }
      return MakeFixed<arrow::DoubleBuilder>(type, wire, label, value);
    }
    case arrow::Type::DECIMAL128: {
      const bool money = kind == SqlTypeKind::kMoney || kind == SqlTypeKind::kSmallMoney;
      if (money ? !IsOneOf(t, {0x3C, 0x7A, 0x6E}) : !IsOneOf(t, {0x6A, 0x6C, 0x37, 0x3F})) {
        Unsupported(captured, wire);
      }
      return std::make_unique<DecimalColumn>(type, wire, label);
    }
    case arrow::Type::DATE32:
      if (t != 0x28) Unsupported(captured, wire);
      return MakeFixed<arrow::Date32Builder>(type, wire, label, [](const std::uint8_t* p, std::size_t) {
        return static_cast<std::int32_t>(static_cast<std::int64_t>(UnsignedLittleEndian(p, 3)) - kDaysFrom0001);
      });
    case arrow::Type::TIMESTAMP: {
      if (kind == SqlTypeKind::kDateTimeOffset) {
        if (t != 0x2B) Unsupported(captured, wire);
        // The wire holds the UTC date and time, then the offset.
        return MakeFixed<arrow::TimestampBuilder>(
            type, wire, label, [scale = wire.scale](const std::uint8_t* p, std::size_t) {
              return DateTime2Micros(p, scale);
            });
      }
      if (t == 0x2A) {
        return MakeFixed<arrow::TimestampBuilder>(
            type, wire, label, [scale = wire.scale](const std::uint8_t* p, std::size_t) {
              return DateTime2Micros(p, scale);
            });
      }
      if (!IsOneOf(t, {0x3D, 0x3A, 0x6F})) Unsupported(captured, wire);
      return MakeFixed<arrow::TimestampBuilder>(type, wire, label, DateTimeMicros);
    }
    case arrow::Type::STRING: {
      if (kind == SqlTypeKind::kUniqueIdentifier) {
        if (t != 0x24) Unsupported(captured, wire);
        return MakeFormatted<kGuidChars>(wire, label, [](const std::uint8_t* p, std::size_t, char* out) {
          SQLGUID guid;
          guid.Data1 = static_cast<std::uint32_t>(UnsignedLittleEndian(p, 4));
          guid.Data2 = static_cast<std::uint16_t>(UnsignedLittleEndian(p + 4, 2));
          guid.Data3 = static_cast<std::uint16_t>(UnsignedLittleEndian(p + 6, 2));
          std::memcpy(guid.Data4, p + 8, 8);
          FormatGuid(guid, out);
        });
      }
      if (kind == SqlTypeKind::kTime) {
        if (t != 0x29) Unsupported(captured, wire);
        return MakeFormatted<kTimeChars>(
            wire, label, [scale = wire.scale](const std::uint8_t* p, std::size_t, char* out) {
              const auto units = static_cast<std::int64_t>(UnsignedLittleEndian(p, TimeBytes(scale)));
              const std::int64_t nanos = units * Pow10(9 - scale);
              const std::int64_t seconds = nanos / 1'000'000'000;
              SsTime2 time{static_cast<SQLUSMALLINT>(seconds / 3600),
                           static_cast<SQLUSMALLINT>((seconds / 60) % 60),
                           static_cast<SQLUSMALLINT>(seconds % 60),
                           static_cast<SQLUINTEGER>(nanos % 1'000'000'000)};
              FormatTime(time, out);
            });
      }
      const bool utf16 = IsOneOf(t, {0xE7, 0xEF, 0x63, 0xF1});
      if (!utf16 && !IsOneOf(t, {0xA7, 0xAF, 0x23})) Unsupported(captured, wire);
      int code_page = 0;
      if (!utf16) {
        code_page = CodePageOf(wire);
        if (code_page == 0) {
          throw WireTypeUnsupported("column '" + captured.name + "' is in a collation whose code "
                                    "page the engine's reader does not convert");
        }
      }
      return std::make_unique<TextColumn>(wire, label, utf16, code_page);
    }
    case arrow::Type::BINARY:
      if (!IsOneOf(t, {0xA5, 0xAD, 0x22})) Unsupported(captured, wire);
      return std::make_unique<BinaryColumn>(wire, label);
    default:
      Unsupported(captured, wire);
  }
}

bool ReadLsnValue(ReplyStream& in, const WireType& wire, std::uint8_t* out) {
  std::size_t length = 0;
  const std::uint8_t* p = ValueBytes(in, wire, &length);
  if (p == nullptr) return false;
  if (length != Lsn::kSize) {
    throw ClientFailure(ClientFailure::Kind::kProtocol,
                        "an LSN came as " + std::to_string(length) + " bytes, not 10");
  }
  std::memcpy(out, p, Lsn::kSize);
  return true;
}

bool ReadIntValue(ReplyStream& in, const WireType& wire, std::int32_t* out) {
  std::size_t length = 0;
  const std::uint8_t* p = ValueBytes(in, wire, &length);
  if (p == nullptr) return false;
  *out = static_cast<std::int32_t>(length == 1 ? p[0] : LittleEndian(p, length));
  return true;
}

bool ReadDateTimeValue(ReplyStream& in, const WireType& wire, std::int64_t* micros) {
  std::size_t length = 0;
  const std::uint8_t* p = ValueBytes(in, wire, &length);
  if (p == nullptr) return false;
  *micros = wire.type == 0x2A ? DateTime2Micros(p, wire.scale) : DateTimeMicros(p, length);
  return true;
}

void SkipValue(ReplyStream& in, const WireType& wire) {
  if (FramingOf(wire) == Framing::kPlp) {
    std::string ignored;
    ReadPlp(in, &ignored);
    return;
  }
  std::size_t length = 0;
  ValueBytes(in, wire, &length);
}

}  // namespace mssql_cdc::odbc
