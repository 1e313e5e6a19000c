#include <arrow/type.h>
#include <arrow/util/decimal.h>

#include <algorithm>
#include <array>

#include "core/errors.h"
#include "core/time.h"
#include "source/odbc/arrow_output.h"
#include "source/odbc/decimal_text.h"
#include "source/odbc/fetch_column.h"
#include "source/odbc/utf16.h"
#include "source/odbc/value_formats.h"

namespace mssql_cdc::odbc {
namespace {

// Bounded char and binary columns are at most 8,000 characters or bytes; a described size
// above that, or 0, is a (max) column.
constexpr SQLULEN kMaxBoundedSize = 8000;
// SQLGetData piece size for long values: large pieces, few calls.
constexpr std::size_t kLongPieceBytes = 1 << 20;

bool IsLongSqlType(SQLSMALLINT sql_type) {
  return sql_type == SQL_LONGVARCHAR || sql_type == SQL_WLONGVARCHAR ||
         sql_type == SQL_LONGVARBINARY || sql_type == kSqlSsXml;
}

// ---- fixed-width C types into fixed-width Arrow values ----

// `Convert` turns a slot (value, indicator) into the Arrow value type `Out`.
template <typename Slot, typename Out, typename Convert>
class FixedColumn final : public FetchColumn {
 public:
  FixedColumn(std::shared_ptr<arrow::DataType> type, SQLSMALLINT c_type, std::string label,
              Convert convert)
      : type_(std::move(type)), slots_(c_type), label_(std::move(label)), convert_(std::move(convert)) {}

  bool Bindable(const ColumnDescription&) const override { return true; }
  std::size_t SlotBytes(const ColumnDescription& d) const override { return slots_.SlotBytes(d); }
  void Allocate(const ColumnDescription& d, std::size_t slots) override { slots_.Allocate(d, slots); }
  void Bind(const OdbcStatement& s, SQLUSMALLINT column) override { slots_.Bind(s, column); }
  void Get(const OdbcStatement& s, SQLUSMALLINT column) override { slots_.Get(s, column); }

  void Append(std::size_t first, std::size_t count) override {
    // The first rows of a batch make room for as many as the last batch had.
    const auto n = std::max(static_cast<std::int64_t>(count),
                            validity_.length() == 0 ? last_rows_ : std::int64_t{0});
    validity_.Reserve(n, label_);
    CheckArrow(values_.Reserve(n), label_);
    for (std::size_t i = first; i < first + count; ++i) {
      if (slots_.IsNull(i)) {
        validity_.Append(false);
        values_.UnsafeAppend(Out{});
      } else {
        validity_.Append(true);
        values_.UnsafeAppend(convert_(slots_.Value(i), slots_.Length(i), label_));
      }
    }
  }

  std::shared_ptr<arrow::Array> Finish() override {
    const std::int64_t length = validity_.length();
    const std::int64_t nulls = validity_.null_count();
    last_rows_ = length;
    auto validity = validity_.Finish(label_);
    auto values = CheckArrow(values_.Finish(false), label_);
    return arrow::MakeArray(arrow::ArrayData::Make(type_, length, {validity, values}, nulls));
  }

 private:
  std::shared_ptr<arrow::DataType> type_;
  FixedSlots<Slot> slots_;
  std::string label_;
  Convert convert_;
  Validity validity_;
  arrow::TypedBufferBuilder<Out> values_;
  std::int64_t last_rows_ = 0;
};

template <typename Slot, typename Out, typename Convert>
std::unique_ptr<FetchColumn> MakeFixed(std::shared_ptr<arrow::DataType> type, SQLSMALLINT c_type,
                                       std::string label, Convert convert) {
  return std::make_unique<FixedColumn<Slot, Out, Convert>>(std::move(type), c_type,
                                                           std::move(label), std::move(convert));
}

// Values the driver hands over in the Arrow type itself.
template <typename T>
std::unique_ptr<FetchColumn> MakeSame(std::shared_ptr<arrow::DataType> type, SQLSMALLINT c_type,
                                      std::string label) {
  return MakeFixed<T, T>(std::move(type), c_type, std::move(label),
                         [](const T& v, SQLLEN, const std::string&) { return v; });
}

// Decimal text as the driver prints it ("-12.3400", up to 38 digits, a sign and a point).
using DecimalText = std::array<char, 48>;

arrow::Decimal128 DecimalOf(const DecimalText& text, SQLLEN length, int precision, int scale,
                            const std::string& label) {
  const std::string_view view(text.data(), static_cast<std::size_t>(
                                               std::clamp<SQLLEN>(length, 0, static_cast<SQLLEN>(text.size()) - 1)));
  const auto value = DecimalFromText(view, precision, scale);
  if (!value) {
    throw SourceError(label + " holds '" + std::string(view) + "', which does not fit decimal(" +
                      std::to_string(precision) + "," + std::to_string(scale) +
                      "), the type the column was captured with");
  }
  return *value;
}

// decimal and numeric from FreeTDS as SQL_C_BINARY: the SQL_NUMERIC_STRUCT of the value at
// the precision and scale the server declared, the magnitude little-endian in val.
arrow::Decimal128 DecimalOf(const SQL_NUMERIC_STRUCT& n, SQLLEN length, int precision, int scale,
                            const std::string& label) {
  if (length != static_cast<SQLLEN>(sizeof(SQL_NUMERIC_STRUCT))) {
    throw SourceError(label + " came back as " + std::to_string(length) +
                      " bytes where the driver's numeric structure has " +
                      std::to_string(sizeof(SQL_NUMERIC_STRUCT)));
  }
  unsigned __int128 magnitude = 0;
  for (int i = SQL_MAX_NUMERIC_LEN - 1; i >= 0; --i) magnitude = (magnitude << 8) | n.val[i];
  // The declared scale is the captured one unless the column changed since; values are
  // brought to the captured scale, and refused as the text path refuses them when they do
  // not fit it.
  bool fits = n.scale >= 0 && n.scale <= 38;
  int from_scale = fits ? n.scale : 0;
  for (; fits && from_scale < scale; ++from_scale) {
    fits = magnitude <= ~static_cast<unsigned __int128>(0) / 10;
    magnitude *= 10;
  }
  for (; fits && from_scale > scale; --from_scale) {
    fits = magnitude % 10 == 0;
    magnitude /= 10;
  }
  unsigned __int128 limit = 1;
  for (int i = 0; i < precision; ++i) limit *= 10;
  if (!fits || magnitude >= limit) {
    std::string digits;
    for (unsigned __int128 m = magnitude; m > 0 || digits.empty(); m /= 10) {
      digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    }
    throw SourceError(label + " holds " + (n.sign == 0 ? "-" : "") + digits + " at scale " +
                      std::to_string(n.scale) + ", which does not fit decimal(" +
                      std::to_string(precision) + "," + std::to_string(scale) +
                      "), the type the column was captured with");
  }
  if (n.sign == 0) magnitude = ~magnitude + 1;  // two's complement, as Arrow stores decimals
  return arrow::Decimal128(static_cast<std::int64_t>(magnitude >> 64),
                           static_cast<std::uint64_t>(magnitude));
}

// time and datetimeoffset come as SQL_C_BINARY, which SQL Server drivers (Microsoft's and
// FreeTDS) fill with the SQL_SS_TIME2 and SQL_SS_TIMESTAMPOFFSET structures; the
// driver-specific C types for them are refused by unixODBC for ODBC 3.0 applications.
template <typename Struct>
void CheckStructLength(SQLLEN length, const std::string& label) {
  if (length != static_cast<SQLLEN>(sizeof(Struct))) {
    throw SourceError(label + " came back as " + std::to_string(length) +
                      " bytes where the driver's structure has " + std::to_string(sizeof(Struct)));
  }
}

// ---- fixed-size C types printed as text (uniqueidentifier, time) ----

template <typename Slot, std::size_t kChars, typename Format>
class FormattedColumn final : public FetchColumn {
 public:
  FormattedColumn(SQLSMALLINT c_type, std::string label, Format format)
      : slots_(c_type), values_(std::move(label)), format_(std::move(format)) {}

  bool Bindable(const ColumnDescription&) const override { return true; }
  std::size_t SlotBytes(const ColumnDescription& d) const override { return slots_.SlotBytes(d); }
  void Allocate(const ColumnDescription& d, std::size_t slots) override { slots_.Allocate(d, slots); }
  void Bind(const OdbcStatement& s, SQLUSMALLINT column) override { slots_.Bind(s, column); }
  void Get(const OdbcStatement& s, SQLUSMALLINT column) override { slots_.Get(s, column); }

  void Append(std::size_t first, std::size_t count) override {
    values_.Reserve(static_cast<std::int64_t>(count));
    for (std::size_t i = first; i < first + count; ++i) {
      if (slots_.IsNull(i)) {
        values_.AppendNull();
      } else {
        if (slots_.Length(i) != static_cast<SQLLEN>(sizeof(Slot))) {
          throw SourceError(values_.label() + " came back as " + std::to_string(slots_.Length(i)) +
                            " bytes where the driver's structure has " +
                            std::to_string(sizeof(Slot)));
        }
        char* at = values_.Room(kChars);
        format_(slots_.Value(i), at);
        values_.Commit(kChars);
      }
    }
  }
  std::shared_ptr<arrow::Array> Finish() override { return values_.Finish(arrow::utf8()); }
  bool variable_length() const override { return true; }
  std::int64_t data_bytes() const override { return values_.data_bytes(); }

 private:
  FixedSlots<Slot> slots_;
  VariableValues values_;
  Format format_;
};

// ---- variable-length values: text as UTF-16 or UTF-8, bytes as they are ----

// How a variable-length column travels from the driver.
enum class VariableForm {
  kUtf16,  // SQL_C_WCHAR, converted to UTF-8 here
  kUtf8,   // SQL_C_CHAR from a driver whose client charset is UTF-8: copied as it is
  kBytes,  // SQL_C_BINARY
};

// Bound: slots of the described size. Unbound: SQLGetData in pieces into `staging_`.
class VariableColumn : public FetchColumn {
 public:
  VariableColumn(std::shared_ptr<arrow::DataType> type, std::string label, VariableForm form)
      : type_(std::move(type)), values_(std::move(label)), form_(form) {}

  bool Bindable(const ColumnDescription& d) const override {
    return !IsLongSqlType(d.sql_type) && d.size > 0 && d.size <= kMaxBoundedSize;
  }
  std::size_t SlotBytes(const ColumnDescription& d) const override {
    return BoundBytes(d) + sizeof(SQLLEN);
  }
  void Allocate(const ColumnDescription& d, std::size_t slots) override {
    bound_ = Bindable(d);
    width_ = bound_ ? BoundBytes(d) : 0;
    buffer_.assign(width_ * slots, '\0');
    indicators_.assign(slots, 0);
    if (!bound_) piece_.resize(kLongPieceBytes);
  }
  void Bind(const OdbcStatement& s, SQLUSMALLINT column) override {
    s.Check(SQLBindCol(s.handle(), column, CType(), buffer_.data(), static_cast<SQLLEN>(width_),
                       indicators_.data()),
            "SQLBindCol");
  }
  void Get(const OdbcStatement& s, SQLUSMALLINT column) override {
    if (bound_) {
      s.Check(SQLGetData(s.handle(), column, CType(), buffer_.data(), static_cast<SQLLEN>(width_),
                         indicators_.data()),
              "SQLGetData");
      return;
    }
    staging_.clear();
    const bool present = ReadLongData(
        s, column, CType(), piece_,
        [&](const void* data, std::size_t bytes) {
          const auto* begin = static_cast<const char*>(data);
          staging_.insert(staging_.end(), begin, begin + bytes);
        },
        [&](std::size_t total) { staging_.reserve(total); });
    indicators_[0] = present ? static_cast<SQLLEN>(staging_.size()) : SQL_NULL_DATA;
  }

  void Append(std::size_t first, std::size_t count) override {
    values_.Reserve(static_cast<std::int64_t>(count));
    for (std::size_t i = first; i < first + count; ++i) {
      const SQLLEN length = indicators_[i];
      if (length == SQL_NULL_DATA) {
        values_.AppendNull();
        continue;
      }
      const char* data = bound_ ? buffer_.data() + i * width_ : staging_.data();
      const std::size_t bytes = static_cast<std::size_t>(length);
      if (bound_ && bytes > width_) {
        throw SourceError(values_.label() + " returned a value of " + std::to_string(bytes) +
                          " bytes into a " + std::to_string(width_) + "-byte buffer");
      }
      if (form_ == VariableForm::kUtf16) {
        const auto* units = reinterpret_cast<const Utf16Unit*>(data);
        const std::size_t n = bytes / sizeof(Utf16Unit);
        char* at = values_.Room(MaxUtf8Bytes(n));
        values_.Commit(Utf16ToUtf8(units, n, at));
      } else {
        values_.Append(data, bytes);
      }
    }
  }
  std::shared_ptr<arrow::Array> Finish() override { return values_.Finish(type_); }
  bool variable_length() const override { return true; }
  std::int64_t data_bytes() const override { return values_.data_bytes(); }

 private:
  SQLSMALLINT CType() const {
    switch (form_) {
      case VariableForm::kUtf16: return SQL_C_WCHAR;
      case VariableForm::kUtf8: return SQL_C_CHAR;
      case VariableForm::kBytes: break;
    }
    return SQL_C_BINARY;
  }
  // Room for the longest value of the described size plus the terminator the driver
  // writes: UTF-16 needs at most one unit per character (a varchar(n) byte count bounds its
  // characters too); UTF-8 at most three bytes per character.
  std::size_t BoundBytes(const ColumnDescription& d) const {
    const auto size = static_cast<std::size_t>(d.size);
    switch (form_) {
      case VariableForm::kUtf16: return (size + 1) * sizeof(Utf16Unit);
      case VariableForm::kUtf8: return 3 * size + 1;
      case VariableForm::kBytes: break;
    }
    return size;
  }

  std::shared_ptr<arrow::DataType> type_;
  VariableValues values_;
  VariableForm form_;
  bool bound_ = true;
  std::size_t width_ = 0;
  std::vector<char> buffer_;
  std::vector<SQLLEN> indicators_;
  std::vector<char> piece_;    // SQLGetData target
  std::vector<char> staging_;  // the whole unbound value
};

}  // namespace

bool FetchColumn::IsLong(const SqlType& type) {
  return type.IsMax() ||
         type.IsOneOf({SqlTypeKind::kText, SqlTypeKind::kNText, SqlTypeKind::kImage, SqlTypeKind::kXml});
}

std::vector<std::size_t> SelectPositions(const std::vector<SqlType>& types) {
  std::vector<std::size_t> positions(types.size());
  std::size_t next = 0;
  for (bool long_pass : {false, true}) {
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (FetchColumn::IsLong(types[i]) == long_pass) positions[i] = next++;
    }
  }
  return positions;
}

std::unique_ptr<FetchColumn> MakeFetchColumn(const SqlType& type, std::string_view column,
                                             std::string label, const FetchOptions& options) {
  const std::shared_ptr<arrow::DataType> arrow_type = ArrowTypeFor(type, column);
  const SqlTypeKind kind = type.kind();
  switch (arrow_type->id()) {
    case arrow::Type::BOOL:
      return MakeFixed<unsigned char, bool>(
          arrow_type, SQL_C_BIT, std::move(label),
          [](unsigned char v, SQLLEN, const std::string&) { return v != 0; });
    case arrow::Type::INT16:
      return MakeSame<std::int16_t>(arrow_type, SQL_C_SSHORT, std::move(label));
    case arrow::Type::INT32:
      return MakeSame<std::int32_t>(arrow_type, SQL_C_SLONG, std::move(label));
    case arrow::Type::INT64:
      return MakeSame<std::int64_t>(arrow_type, SQL_C_SBIGINT, std::move(label));
    case arrow::Type::FLOAT:
      return MakeSame<float>(arrow_type, SQL_C_FLOAT, std::move(label));
    case arrow::Type::DOUBLE:
      return MakeSame<double>(arrow_type, SQL_C_DOUBLE, std::move(label));
    case arrow::Type::DECIMAL128: {
      const auto& decimal = static_cast<const arrow::Decimal128Type&>(*arrow_type);
      if (options.numeric_struct_binary && type.IsOneOf({SqlTypeKind::kDecimal, SqlTypeKind::kNumeric})) {
        return MakeFixed<SQL_NUMERIC_STRUCT, arrow::Decimal128>(
            arrow_type, SQL_C_BINARY, std::move(label),
            [precision = decimal.precision(), scale = decimal.scale()](
                const SQL_NUMERIC_STRUCT& n, SQLLEN length, const std::string& l) {
              return DecimalOf(n, length, precision, scale, l);
            });
      }
      return MakeFixed<DecimalText, arrow::Decimal128>(
          arrow_type, SQL_C_CHAR, std::move(label),
          [precision = decimal.precision(), scale = decimal.scale()](
              const DecimalText& text, SQLLEN length, const std::string& l) {
            return DecimalOf(text, length, precision, scale, l);
          });
    }
    case arrow::Type::DATE32:
      return MakeFixed<SQL_DATE_STRUCT, std::int32_t>(
          arrow_type, SQL_C_TYPE_DATE, std::move(label),
          [](const SQL_DATE_STRUCT& d, SQLLEN, const std::string&) {
            return static_cast<std::int32_t>(DaysFromCivil(d.year, d.month, d.day));
          });
    case arrow::Type::TIMESTAMP:
      if (kind == SqlTypeKind::kDateTimeOffset) {
        return MakeFixed<SsTimestampOffset, std::int64_t>(
            arrow_type, SQL_C_BINARY, std::move(label),
            [](const SsTimestampOffset& t, SQLLEN length, const std::string& l) {
              CheckStructLength<SsTimestampOffset>(length, l);
              const SQL_TIMESTAMP_STRUCT local{t.year, t.month, t.day, t.hour, t.minute, t.second,
                                               t.fraction};
              return TimestampMicros(local) - (t.timezone_hour * kMicrosPerHour +
                                               t.timezone_minute * kMicrosPerMinute);
            });
      }
      return MakeFixed<SQL_TIMESTAMP_STRUCT, std::int64_t>(
          arrow_type, SQL_C_TYPE_TIMESTAMP, std::move(label),
          [](const SQL_TIMESTAMP_STRUCT& t, SQLLEN, const std::string&) { return TimestampMicros(t); });
    case arrow::Type::STRING:
      if (kind == SqlTypeKind::kUniqueIdentifier) {
        auto format = [](const SQLGUID& g, char* out) { FormatGuid(g, out); };
        return std::make_unique<FormattedColumn<SQLGUID, kGuidChars, decltype(format)>>(
            SQL_C_GUID, std::move(label), format);
      }
      if (kind == SqlTypeKind::kTime) {
        auto format = [](const SsTime2& t, char* out) { FormatTime(t, out); };
        return std::make_unique<FormattedColumn<SsTime2, kTimeChars, decltype(format)>>(
            SQL_C_BINARY, std::move(label), format);
      }
      // Single-byte text converts once in the driver when it hands out UTF-8 (FreeTDS keeps
      // it in the client charset); UTF-16 text is UTF-16 on the wire, cheapest as it is.
      return std::make_unique<VariableColumn>(
          arrow_type, std::move(label),
          options.utf8_char_data && type.IsOneOf({SqlTypeKind::kChar, SqlTypeKind::kVarChar, SqlTypeKind::kText})
              ? VariableForm::kUtf8
              : VariableForm::kUtf16);
    case arrow::Type::BINARY:
      return std::make_unique<VariableColumn>(arrow_type, std::move(label), VariableForm::kBytes);
    default:
      throw InternalError("no ODBC fetch for Arrow type " + arrow_type->ToString() +
                          " of column '" + std::string(column) + "'");
  }
}

}  // namespace mssql_cdc::odbc
