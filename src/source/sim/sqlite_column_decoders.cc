#include "source/sim/sqlite_column_decoders.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>

#include <utility>

#include "core/errors.h"
#include "core/time.h"
#include "core/user_text.h"

namespace mssql_cdc {
namespace {

using U128 = unsigned __int128;

U128 Pow10(int exponent) {
  U128 v = 1;
  for (int i = 0; i < exponent; ++i) v *= 10;
  return v;
}

void CheckArrow(const arrow::Status& status, const std::string& label) {
  if (!status.ok()) throw SourceError("cannot build " + label + ": " + status.ToString());
}

std::string_view StorageClassName(int type) {
  switch (type) {
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT: return "REAL";
    case SQLITE_TEXT: return "TEXT";
    case SQLITE_BLOB: return "BLOB";
    default: return "NULL";
  }
}

std::string_view TextOf(sqlite3_value* value) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  return {text, static_cast<std::size_t>(sqlite3_value_bytes(value))};
}

// What every decoder knows about its column, and how it complains.
class ColumnContext {
 public:
  ColumnContext(std::string label, SqlType type) : label_(std::move(label)), type_(std::move(type)) {}
  const std::string& label() const { return label_; }
  const SqlType& type() const { return type_; }

  // Throws unless the value's storage class is `expected` (or `also`, when given).
  void ExpectStorage(sqlite3_value* value, int expected, int also = -1) const {
    const int actual = sqlite3_value_type(value);
    if (actual == expected || actual == also) return;
    throw SourceError(label_ + " (" + type_.ToString() + ") holds a " +
                      std::string(StorageClassName(actual)) + " value where the sim storage "
                      "format stores " + std::string(StorageClassName(expected)) +
                      ": the file was not written by a matching simulator");
  }
  [[noreturn]] void BadText(std::string_view text) const {
    throw SourceError(label_ + " (" + type_.ToString() + ") holds " + QuoteUserText(text) +
                      ", which is not the sim storage encoding of that type");
  }

 private:
  std::string label_;
  SqlType type_;
};

// What every decoder does around its values: an Arrow builder that Reserve sizes and Finish
// empties, and NULLs appended unchecked (Reserve made the room). `Derived` appends the values
// that are not NULL with AppendValue, called without a virtual dispatch.
template <typename Derived, typename Builder>
class BuilderDecoder : public ColumnDecoder {
 public:
  void Reserve(std::int64_t rows) final { CheckArrow(builder_.Reserve(rows), context_.label()); }
  void Append(sqlite3_value* value) final {
    if (sqlite3_value_type(value) == SQLITE_NULL) {
      builder_.UnsafeAppendNull();
    } else {
      static_cast<Derived*>(this)->AppendValue(value);
    }
  }
  std::shared_ptr<arrow::Array> Finish() final {
    std::shared_ptr<arrow::Array> out;
    CheckArrow(builder_.Finish(&out), context_.label());
    return out;
  }

 protected:
  template <typename... BuilderArgs>
  explicit BuilderDecoder(ColumnContext context, BuilderArgs&&... builder_args)
      : builder_(std::forward<BuilderArgs>(builder_args)...), context_(std::move(context)) {}

  Builder builder_;
  ColumnContext context_;
};

// Fixed-width values: Arrow builder of a primitive type plus a function turning the current
// SQLite value into the builder's value type. Appends are unchecked; Reserve made the room.
template <typename Builder, typename Decode>
class FixedWidthDecoder final
    : public BuilderDecoder<FixedWidthDecoder<Builder, Decode>, Builder> {
 public:
  FixedWidthDecoder(std::shared_ptr<arrow::DataType> type, ColumnContext context, Decode decode)
      : FixedWidthDecoder::BuilderDecoder(std::move(context), std::move(type),
                                          arrow::default_memory_pool()),
        decode_(std::move(decode)) {}

  void AppendValue(sqlite3_value* value) {
    this->builder_.UnsafeAppend(decode_(this->context_, value));
  }

 private:
  Decode decode_;
};

template <typename Builder, typename Decode>
std::unique_ptr<ColumnDecoder> MakeFixed(std::shared_ptr<arrow::DataType> type,
                                         ColumnContext context, Decode decode) {
  return std::make_unique<FixedWidthDecoder<Builder, Decode>>(std::move(type), std::move(context),
                                                              std::move(decode));
}

// Variable-length values copied as stored: TEXT into a string array, BLOB into a binary one.
template <typename Builder>
class BytesDecoder final : public BuilderDecoder<BytesDecoder<Builder>, Builder> {
 public:
  BytesDecoder(ColumnContext context, int storage_class)
      : BytesDecoder::BuilderDecoder(std::move(context)), storage_class_(storage_class) {}

  void AppendValue(sqlite3_value* value) {
    this->context_.ExpectStorage(value, storage_class_);
    // The pointer first, then the length: SQLite's documented order for a stable answer.
    const void* data = storage_class_ == SQLITE_TEXT
                           ? static_cast<const void*>(sqlite3_value_text(value))
                           : sqlite3_value_blob(value);
    const int size = sqlite3_value_bytes(value);
    CheckArrow(this->builder_.Append(static_cast<const std::uint8_t*>(data), size),
               this->context_.label());
  }
  bool variable_length() const override { return true; }
  std::int64_t data_bytes() const override { return this->builder_.value_data_length(); }

 private:
  int storage_class_;
};

template <typename T>
T IntegerOf(const ColumnContext& context, sqlite3_value* value) {
  context.ExpectStorage(value, SQLITE_INTEGER);
  return static_cast<T>(sqlite3_value_int64(value));
}

double RealOf(const ColumnContext& context, sqlite3_value* value) {
  // REAL affinity may hand back an integral value as INTEGER.
  context.ExpectStorage(value, SQLITE_FLOAT, SQLITE_INTEGER);
  return sqlite3_value_double(value);
}

std::string_view StoredText(const ColumnContext& context, sqlite3_value* value) {
  context.ExpectStorage(value, SQLITE_TEXT);
  return TextOf(value);
}

// The stored text of `value` read by `parse` (text -> optional); throws naming the column
// when it does not parse.
template <typename Parse>
auto ParsedText(const ColumnContext& context, sqlite3_value* value, Parse parse) {
  const std::string_view text = StoredText(context, value);
  const auto parsed = parse(text);
  if (!parsed) context.BadText(text);
  return *parsed;
}

}  // namespace

std::optional<Int128Parts> ParseStoredDecimal(std::string_view text, int precision, int scale) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) return std::nullopt;
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  U128 value = 0;
  int significant = 0;
  int fraction = 0;
  bool dot = false;
  bool any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (dot) return std::nullopt;
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    any_digit = true;
    if (dot && ++fraction > scale) return std::nullopt;
    if (value != 0 || c != '0') ++significant;
    if (significant > precision) return std::nullopt;  // also keeps `value` below 10^38
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (!any_digit) return std::nullopt;
  const int pad = scale - fraction;  // fewer fraction digits than the scale: same number
  if (value >= Pow10(precision - pad)) return std::nullopt;
  value *= Pow10(pad);
  if (negative) value = ~value + 1;  // two's complement, as Arrow stores decimals
  return Int128Parts{static_cast<std::int64_t>(value >> 64), static_cast<std::uint64_t>(value)};
}

std::optional<std::int64_t> ParseStoredDateTimeOffset(std::string_view text) {
  const auto space = text.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view offset = text.substr(space + 1);
  if (offset.size() != 6 || (offset[0] != '+' && offset[0] != '-') || offset[3] != ':') {
    return std::nullopt;
  }
  for (std::size_t i : {1, 2, 4, 5}) {
    if (offset[i] < '0' || offset[i] > '9') return std::nullopt;
  }
  const int hours = (offset[1] - '0') * 10 + (offset[2] - '0');
  const int minutes = (offset[4] - '0') * 10 + (offset[5] - '0');
  if (hours > 14 || minutes > 59) return std::nullopt;
  const auto local = ParseDateTime(text.substr(0, space));
  if (!local) return std::nullopt;
  const std::int64_t east = (offset[0] == '-' ? -1 : 1) * (hours * kMicrosPerHour +
                                                            minutes * kMicrosPerMinute);
  return *local - east;
}

std::optional<std::int32_t> ParseStoredDate(std::string_view text) {
  const auto days = ParseDateDays(text);
  if (!days) return std::nullopt;
  return static_cast<std::int32_t>(*days);
}

std::unique_ptr<ColumnDecoder> MakeColumnDecoder(const SqlType& type, std::string_view column,
                                                 std::string label) {
  const std::shared_ptr<arrow::DataType> arrow_type = ArrowTypeFor(type, column);
  ColumnContext context(std::move(label), type);
  switch (arrow_type->id()) {
    case arrow::Type::BOOL:
      return MakeFixed<arrow::BooleanBuilder>(
          arrow_type, std::move(context),
          [](const ColumnContext& c, sqlite3_value* v) { return IntegerOf<int>(c, v) != 0; });
    case arrow::Type::INT16:
      return MakeFixed<arrow::Int16Builder>(arrow_type, std::move(context), IntegerOf<std::int16_t>);
    case arrow::Type::INT32:
      return MakeFixed<arrow::Int32Builder>(arrow_type, std::move(context), IntegerOf<std::int32_t>);
    case arrow::Type::INT64:
      return MakeFixed<arrow::Int64Builder>(arrow_type, std::move(context), IntegerOf<std::int64_t>);
    case arrow::Type::FLOAT:
      return MakeFixed<arrow::FloatBuilder>(
          arrow_type, std::move(context),
          [](const ColumnContext& c, sqlite3_value* v) { return static_cast<float>(RealOf(c, v)); });
    case arrow::Type::DOUBLE:
      return MakeFixed<arrow::DoubleBuilder>(arrow_type, std::move(context), RealOf);
    case arrow::Type::DECIMAL128: {
      const auto& decimal = static_cast<const arrow::Decimal128Type&>(*arrow_type);
      return MakeFixed<arrow::Decimal128Builder>(
          arrow_type, std::move(context),
          [precision = decimal.precision(), scale = decimal.scale()](
              const ColumnContext& c, sqlite3_value* v) {
            const Int128Parts parts = ParsedText(c, v, [&](std::string_view text) {
              return ParseStoredDecimal(text, precision, scale);
            });
            return arrow::Decimal128(parts.high, parts.low);
          });
    }
    case arrow::Type::DATE32:
      return MakeFixed<arrow::Date32Builder>(
          arrow_type, std::move(context), [](const ColumnContext& c, sqlite3_value* v) {
            return ParsedText(c, v, ParseStoredDate);
          });
    case arrow::Type::TIMESTAMP:
      if (type.kind() == SqlTypeKind::kDateTimeOffset) {
        return MakeFixed<arrow::TimestampBuilder>(
            arrow_type, std::move(context), [](const ColumnContext& c, sqlite3_value* v) {
              return ParsedText(c, v, ParseStoredDateTimeOffset);
            });
      }
      return MakeFixed<arrow::TimestampBuilder>(
          arrow_type, std::move(context), [](const ColumnContext& c, sqlite3_value* v) {
            return ParsedText(c, v, ParseDateTime);
          });
    case arrow::Type::STRING:
      return std::make_unique<BytesDecoder<arrow::StringBuilder>>(std::move(context), SQLITE_TEXT);
    case arrow::Type::BINARY:
      return std::make_unique<BytesDecoder<arrow::BinaryBuilder>>(std::move(context), SQLITE_BLOB);
    default:
      throw InternalError("no sim decoder for Arrow type " + arrow_type->ToString() +
                          " of column '" + std::string(column) + "'");
  }
}

}  // namespace mssql_cdc
