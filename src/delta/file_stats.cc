#include "delta/file_stats.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "delta/compute_kernels.h"
#include "core/time.h"

namespace mssql_cdc::delta {
namespace {

// Spark's default delta.dataSkippingStringPrefixLength.
constexpr int kStringPrefixLength = 32;

std::string JsonString(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Leaf columns a field counts for in the stats column budget: Spark walks into structs and
// counts every other type (lists and maps included) as one.
int LeafCount(const arrow::DataType& type) {
  if (type.id() != arrow::Type::STRUCT) return 1;
  int leaves = 0;
  for (const auto& child : type.fields()) leaves += LeafCount(*child->type());
  return leaves;
}

bool HasMinMaxStats(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::DATE32:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return true;
    default:
      return false;
  }
}

std::string FormatDate(std::int64_t days) {
  using namespace std::chrono;
  const year_month_day ymd{sys_days{std::chrono::days{days}}};
  char out[32];
  std::snprintf(out, sizeof out, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return out;
}

std::int64_t ToMicros(std::int64_t value, arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return value * 1'000'000;
    case arrow::TimeUnit::MILLI: return value * 1'000;
    case arrow::TimeUnit::MICRO: return value;
    case arrow::TimeUnit::NANO: return FloorDiv(value, 1'000);
  }
  return value;
}

// Delta keeps timestamp stats at millisecond precision, truncated down.
std::string FormatTimestamp(std::int64_t value, const arrow::TimestampType& type) {
  const std::int64_t millis = FloorDiv(ToMicros(value, type.unit()), 1'000);
  const std::int64_t days = FloorDiv(millis, 86'400'000);
  const std::int64_t ms_of_day = millis - days * 86'400'000;
  char time[32];
  std::snprintf(time, sizeof time, "T%02d:%02d:%02d.%03d",
                static_cast<int>(ms_of_day / 3'600'000), static_cast<int>(ms_of_day / 60'000 % 60),
                static_cast<int>(ms_of_day / 1'000 % 60), static_cast<int>(ms_of_day % 1'000));
  return FormatDate(days) + time + (type.timezone().empty() ? "" : "Z");
}

template <typename T>
std::optional<std::string> FormatFloating(T value) {
  if (!std::isfinite(value)) return std::nullopt;  // JSON has no NaN or infinity
  char out[64];
  auto [end, ec] = std::to_chars(out, out + sizeof out, value);
  std::string text(out, end);
  // Keep a floating look ("1.0", as Spark writes it) so that readers see a double.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// The JSON text of a min or max scalar; nullopt leaves the statistic out.
std::optional<std::string> FormatBound(const arrow::Scalar& scalar, bool is_max) {
  if (!scalar.is_valid) return std::nullopt;
  switch (scalar.type->id()) {
    case arrow::Type::INT8:
      return std::to_string(static_cast<const arrow::Int8Scalar&>(scalar).value);
    case arrow::Type::INT16:
      return std::to_string(static_cast<const arrow::Int16Scalar&>(scalar).value);
    case arrow::Type::INT32:
      return std::to_string(static_cast<const arrow::Int32Scalar&>(scalar).value);
    case arrow::Type::INT64:
      return std::to_string(static_cast<const arrow::Int64Scalar&>(scalar).value);
    case arrow::Type::FLOAT:
      return FormatFloating(static_cast<const arrow::FloatScalar&>(scalar).value);
    case arrow::Type::DOUBLE:
      return FormatFloating(static_cast<const arrow::DoubleScalar&>(scalar).value);
    case arrow::Type::DECIMAL128: {
      const auto& type = static_cast<const arrow::Decimal128Type&>(*scalar.type);
      return static_cast<const arrow::Decimal128Scalar&>(scalar).value.ToString(type.scale());
    }
    case arrow::Type::DECIMAL256: {
      const auto& type = static_cast<const arrow::Decimal256Type&>(*scalar.type);
      return static_cast<const arrow::Decimal256Scalar&>(scalar).value.ToString(type.scale());
    }
    case arrow::Type::DATE32:
      return JsonString(FormatDate(static_cast<const arrow::Date32Scalar&>(scalar).value));
    case arrow::Type::TIMESTAMP:
      return JsonString(FormatTimestamp(static_cast<const arrow::TimestampScalar&>(scalar).value,
                                        static_cast<const arrow::TimestampType&>(*scalar.type)));
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: {
      auto view = static_cast<const arrow::BaseBinaryScalar&>(scalar).view();
      if (!is_max) return JsonString(TruncateMinString(std::string(view), kStringPrefixLength));
      auto bound = TruncateMaxString(std::string(view), kStringPrefixLength);
      if (!bound) return std::nullopt;
      return JsonString(*bound);
    }
    default:
      return std::nullopt;
  }
}

bool ContainsNaN(const std::shared_ptr<arrow::ChunkedArray>& column) {
  auto is_nan = arrow::compute::CallFunction("is_nan", {column});
  if (!is_nan.ok()) throw InternalError("stats: is_nan failed: " + is_nan.status().ToString());
  auto any = arrow::compute::Any(*is_nan);
  if (!any.ok()) throw InternalError("stats: any failed: " + any.status().ToString());
  const auto& scalar = any->scalar_as<arrow::BooleanScalar>();
  return scalar.is_valid && scalar.value;
}

// Number of bytes of the UTF-8 sequence starting with `lead`.
int Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // not a lead byte: step over it rather than stall
}

constexpr std::string_view kUtf8MaxCharacter = "\xF4\x8F\xBF\xBF";  // U+10FFFF
constexpr char kAsciiMaxCharacter = '\x7F';

}  // namespace

// Spark counts characters (code points) for the min's prefix.
std::string TruncateMinString(const std::string& value, int prefix) {
  std::size_t pos = 0;
  for (int chars = 0; chars < prefix && pos < value.size(); ++chars)
    pos += Utf8Length(static_cast<unsigned char>(value[pos]));
  return value.substr(0, std::min(pos, value.size()));
}

// Spark works on a Java string here, so lengths are UTF-16 units: a character outside the BMP
// (4 UTF-8 bytes) counts two. The prefix grows past `prefix` units only to step over U+10FFFF
// characters (no tie-breaker beats them), up to twice the prefix length.
std::optional<std::string> TruncateMaxString(const std::string& value, int prefix) {
  auto units = [](std::size_t bytes) { return bytes == 4 ? 2 : 1; };
  int total_units = 0;
  for (std::size_t pos = 0; pos < value.size();) {
    const std::size_t bytes = Utf8Length(static_cast<unsigned char>(value[pos]));
    total_units += units(bytes);
    pos += bytes;
  }
  if (total_units <= prefix) return value;
  if (prefix <= 0) return std::nullopt;

  // The starting prefix: `prefix` units, plus the low half of a pair split at the boundary.
  std::size_t pos = 0;
  int current_units = 0;
  while (current_units < prefix && pos < value.size()) {
    const std::size_t bytes = Utf8Length(static_cast<unsigned char>(value[pos]));
    current_units += units(bytes);
    pos += bytes;
  }
  const int max_units = 2 * prefix;
  while (current_units <= max_units) {
    if (pos >= value.size()) return value;
    const std::size_t bytes = Utf8Length(static_cast<unsigned char>(value[pos]));
    if (std::string_view(value).substr(pos, bytes) == kUtf8MaxCharacter) {
      current_units += 2;
      pos += bytes;
    } else if (static_cast<unsigned char>(value[pos]) < static_cast<unsigned char>(kAsciiMaxCharacter)) {
      return value.substr(0, pos) + kAsciiMaxCharacter;
    } else {
      return value.substr(0, pos) + std::string(kUtf8MaxCharacter);
    }
  }
  return std::nullopt;
}

std::string ComputeFileStats(const arrow::Schema& schema,
                             const std::vector<std::shared_ptr<arrow::ChunkedArray>>& columns,
                             std::int64_t num_records, int stats_columns) {
  FileStatsAccumulator stats(std::make_shared<arrow::Schema>(schema), stats_columns);
  stats.Add(columns);
  return stats.Json(num_records);
}

FileStatsAccumulator::FileStatsAccumulator(std::shared_ptr<arrow::Schema> schema, int stats_columns)
    : schema_(std::move(schema)), columns_(schema_->num_fields()) {
  int budget = stats_columns < 0 ? std::numeric_limits<int>::max() : stats_columns;
  for (int i = 0; i < schema_->num_fields() && budget > 0; ++i) {
    const auto& type = *schema_->field(i)->type();
    budget -= LeafCount(type);
    columns_[i].indexed = type.id() != arrow::Type::STRUCT;  // nested stats: not written
  }
}

namespace {

// The smaller (or larger) of two valid scalars of one type, as MinMax orders them.
std::shared_ptr<arrow::Scalar> Bound(const std::shared_ptr<arrow::Scalar>& a,
                                     const std::shared_ptr<arrow::Scalar>& b, bool is_max) {
  auto left = arrow::MakeArrayFromScalar(*a, 1);
  auto right = arrow::MakeArrayFromScalar(*b, 1);
  if (!left.ok() || !right.ok()) throw InternalError("stats: cannot compare bounds");
  auto both = std::make_shared<arrow::ChunkedArray>(arrow::ArrayVector{*left, *right}, a->type);
  auto result = arrow::compute::MinMax(both, arrow::compute::ScalarAggregateOptions(true, 1));
  if (!result.ok()) throw InternalError("stats: min/max failed: " + result.status().ToString());
  return result->scalar_as<arrow::StructScalar>().value[is_max ? 1 : 0];
}

// A string column's min and max, compared bytewise as MinMax compares them, without the
// string copy MinMax makes for every new bound (a column that grows row by row, as LSNs do,
// has a new max in every row). Both null when the column holds no value.
template <typename ArrayType>
std::pair<std::shared_ptr<arrow::Scalar>, std::shared_ptr<arrow::Scalar>> StringMinMax(
    const arrow::ChunkedArray& column) {
  std::optional<std::string_view> min, max;
  for (const auto& chunk : column.chunks()) {
    const auto& strings = static_cast<const ArrayType&>(*chunk);
    const bool has_nulls = strings.null_count() > 0;
    for (std::int64_t i = 0; i < strings.length(); ++i) {
      if (has_nulls && strings.IsNull(i)) continue;
      const std::string_view value = strings.GetView(i);
      if (!min || value < *min) min = value;
      if (!max || value > *max) max = value;
    }
  }
  if (!min) return {nullptr, nullptr};
  using ScalarType = typename arrow::TypeTraits<typename ArrayType::TypeClass>::ScalarType;
  auto scalar = [](std::string_view value) -> std::shared_ptr<arrow::Scalar> {
    return std::make_shared<ScalarType>(std::string(value));
  };
  return {scalar(*min), scalar(*max)};
}

}  // namespace

void FileStatsAccumulator::Add(const std::vector<std::shared_ptr<arrow::ChunkedArray>>& columns) {
  EnsureComputeKernels();
  if (columns.size() != static_cast<std::size_t>(schema_->num_fields()))
    throw InternalError("stats: " + std::to_string(columns.size()) + " columns for a schema of " +
                        std::to_string(schema_->num_fields()) + " fields");
  if (!columns.empty()) rows_ += columns[0]->length();
  for (int i = 0; i < schema_->num_fields(); ++i) {
    ColumnStats& stats = columns_[i];
    if (!stats.indexed) continue;
    const auto& field = schema_->field(i);
    const auto& type = *field->type();
    const auto& column = columns[i];
    stats.null_count += column->null_count();
    if (!HasMinMaxStats(type) || column->null_count() == column->length()) continue;
    std::shared_ptr<arrow::Scalar> min, max;
    if (type.id() == arrow::Type::STRING) {
      std::tie(min, max) = StringMinMax<arrow::StringArray>(*column);
    } else if (type.id() == arrow::Type::LARGE_STRING) {
      std::tie(min, max) = StringMinMax<arrow::LargeStringArray>(*column);
    } else {
      auto result = arrow::compute::MinMax(column, arrow::compute::ScalarAggregateOptions(true, 1));
      if (!result.ok())
        throw InternalError("stats: min/max of column " + field->name() + " failed: " +
                            result.status().ToString());
      const auto& min_max = result->scalar_as<arrow::StructScalar>();
      min = min_max.value[0];
      max = min_max.value[1];
    }
    const bool floating = type.id() == arrow::Type::FLOAT || type.id() == arrow::Type::DOUBLE;
    stats.has_nan = stats.has_nan || (floating && ContainsNaN(column));
    if (min && min->is_valid) stats.min = stats.min ? Bound(stats.min, min, false) : min;
    if (max && max->is_valid) stats.max = stats.max ? Bound(stats.max, max, true) : max;
  }
}

std::string FileStatsAccumulator::Json(std::optional<std::int64_t> num_records) const {
  std::string min_values, max_values, null_counts;
  auto append = [](std::string& object, const std::string& key, const std::string& value) {
    if (!object.empty()) object += ',';
    object += key;
    object += ':';
    object += value;
  };
  for (int i = 0; i < schema_->num_fields(); ++i) {
    const ColumnStats& stats = columns_[i];
    if (!stats.indexed) continue;
    const std::string key = JsonString(schema_->field(i)->name());
    append(null_counts, key, std::to_string(stats.null_count));
    if (stats.min) {
      if (auto text = FormatBound(*stats.min, false)) append(min_values, key, *text);
    }
    if (stats.max && !stats.has_nan) {
      if (auto text = FormatBound(*stats.max, true)) append(max_values, key, *text);
    }
  }
  return "{\"numRecords\":" + std::to_string(num_records.value_or(rows_)) + ",\"minValues\":{" + min_values +
         "},\"maxValues\":{" + max_values + "},\"nullCount\":{" + null_counts + "}}";
}

namespace {

// Collects the top-level entries of a stats object, keeping numbers' text as written.
class StatsSaxHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit StatsSaxHandler(ParsedFileStats& out) : out_(out) {}

  bool null() override { return Value(std::nullopt); }
  bool boolean(bool) override { return Value(std::nullopt); }
  bool number_integer(number_integer_t v) override { return Value(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Value(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& raw) override { return Value(raw); }
  bool string(string_t& v) override { return Value(v); }
  bool binary(binary_t&) override { return Value(std::nullopt); }
  bool start_object(std::size_t) override {
    path_.push_back(pending_key_);
    return true;
  }
  bool key(string_t& k) override {
    pending_key_ = k;
    return true;
  }
  bool end_object() override {
    path_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    path_.push_back(pending_key_);
    ++array_depth_;
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    --array_depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // path_[0] is the root (empty key); path_[1] the section (minValues, ...).
  bool Value(const std::optional<std::string>& text) {
    if (array_depth_ > 0 || !text) return true;
    if (path_.size() == 1 && pending_key_ == "numRecords") {
      out_.num_records = ToInt(*text);
    } else if (path_.size() == 2) {
      const std::string& section = path_[1];
      if (section == "minValues") out_.min_values[pending_key_] = *text;
      else if (section == "maxValues") out_.max_values[pending_key_] = *text;
      else if (section == "nullCount") {
        if (auto n = ToInt(*text)) out_.null_count[pending_key_] = *n;
      }
    }
    return true;
  }
  static std::optional<std::int64_t> ToInt(const std::string& text) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
  }

  ParsedFileStats& out_;
  std::vector<std::string> path_;
  std::string pending_key_;
  int array_depth_ = 0;
};

}  // namespace

std::optional<ParsedFileStats> ParseFileStats(const std::string& json) {
  ParsedFileStats stats;
  StatsSaxHandler handler(stats);
  if (json.empty() || json.front() != '{') return std::nullopt;
  if (!nlohmann::json::sax_parse(json, &handler)) return std::nullopt;
  return stats;
}

}  // namespace mssql_cdc::delta
