#include "delta/row_filter.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <cctype>

#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/compute_kernels.h"

namespace mssql_cdc::delta {
namespace {

// Arrow compute's comparison function for each operator this filter accepts.
const char* ComparisonFunction(const std::string& op) {
  if (op == "=") return "equal";
  if (op == "!=") return "not_equal";
  if (op == "<") return "less";
  if (op == "<=") return "less_equal";
  if (op == ">") return "greater";
  if (op == ">=") return "greater_equal";
  return nullptr;
}

std::string Describe(const FilterTerm& term) {
  return "'" + term.column + " " + term.op + " " + term.value + "'";
}

bool EqualsIgnoreCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// Delta column names are case-insensitive; an exact match wins.
std::shared_ptr<arrow::Field> FindColumn(const arrow::Schema& schema, const std::string& name) {
  if (auto field = schema.GetFieldByName(name)) return field;
  for (const auto& field : schema.fields())
    if (EqualsIgnoreCase(field->name(), name)) return field;
  return nullptr;
}

// nullopt when the comparison cannot be evaluated (a NULL or an error): never decisive.
std::optional<bool> Compare(const char* function, const std::shared_ptr<arrow::Scalar>& left,
                            const std::shared_ptr<arrow::Scalar>& right) {
  auto result = arrow::compute::CallFunction(function, {left, right});
  if (!result.ok()) return std::nullopt;
  const auto& scalar = result->scalar_as<arrow::BooleanScalar>();
  if (!scalar.is_valid) return std::nullopt;
  return scalar.value;
}

template <typename Decimal, typename ScalarType, typename TypeClass>
std::shared_ptr<arrow::Scalar> ParseDecimal(const std::shared_ptr<arrow::DataType>& type,
                                            const std::string& text) {
  const auto& decimal_type = static_cast<const TypeClass&>(*type);
  Decimal value;
  int32_t precision = 0, scale = 0;
  if (!Decimal::FromString(text, &value, &precision, &scale).ok()) return nullptr;
  // Only exact rescaling: a literal with more decimals than the column cannot be compared as
  // a column value.
  auto rescaled = value.Rescale(scale, decimal_type.scale());
  if (!rescaled.ok() || !rescaled->FitsInPrecision(decimal_type.precision())) return nullptr;
  return std::make_shared<ScalarType>(*rescaled, type);
}

std::shared_ptr<arrow::Scalar> ParseStat(const std::map<std::string, std::string>& values,
                                         const std::string& column,
                                         const std::shared_ptr<arrow::DataType>& type) {
  auto it = values.find(column);
  if (it == values.end()) return nullptr;
  return ParseLiteral(type, it->second);
}

// Timestamp maxima are stored truncated down to milliseconds; the true maximum can lie up to
// one millisecond minus one unit above.
std::shared_ptr<arrow::Scalar> WidenTimestampMax(const std::shared_ptr<arrow::Scalar>& max) {
  if (!max || max->type->id() != arrow::Type::TIMESTAMP) return max;
  const auto& type = static_cast<const arrow::TimestampType&>(*max->type);
  std::int64_t slack = 0;
  if (type.unit() == arrow::TimeUnit::MICRO) slack = 999;
  if (type.unit() == arrow::TimeUnit::NANO) slack = 999'999;
  return std::make_shared<arrow::TimestampScalar>(
      static_cast<const arrow::TimestampScalar&>(*max).value + slack, max->type);
}

// Whether the column's [min, max] range proves that no value satisfies `value op literal`.
bool RangeExcludes(const std::string& op, const std::shared_ptr<arrow::Scalar>& min,
                   const std::shared_ptr<arrow::Scalar>& max,
                   const std::shared_ptr<arrow::Scalar>& literal) {
  auto proves = [&](const char* function, const std::shared_ptr<arrow::Scalar>& left,
                    const std::shared_ptr<arrow::Scalar>& right) {
    return left && right && Compare(function, left, right).value_or(false);
  };
  if (op == "=") return proves("less", literal, min) || proves("greater", literal, max);
  if (op == "<") return proves("greater_equal", min, literal);
  if (op == "<=") return proves("greater", min, literal);
  if (op == ">") return proves("less_equal", max, literal);
  if (op == ">=") return proves("less", max, literal);
  return false;  // "!=": bounds alone cannot show that every value equals the literal
}

}  // namespace

std::shared_ptr<arrow::Scalar> ParseLiteral(const std::shared_ptr<arrow::DataType>& type,
                                            const std::string& text) {
  switch (type->id()) {
    case arrow::Type::DECIMAL128:
      return ParseDecimal<arrow::Decimal128, arrow::Decimal128Scalar, arrow::Decimal128Type>(type, text);
    case arrow::Type::DECIMAL256:
      return ParseDecimal<arrow::Decimal256, arrow::Decimal256Scalar, arrow::Decimal256Type>(type, text);
    default: {
      auto parsed = arrow::Scalar::Parse(type, text);
      return parsed.ok() ? *parsed : nullptr;
    }
  }
}

std::vector<BoundFilterTerm> BindFilter(const arrow::Schema& schema,
                                        const std::vector<FilterTerm>& filter) {
  EnsureComputeKernels();
  std::vector<BoundFilterTerm> bound;
  for (const auto& term : filter) {
    if (!ComparisonFunction(term.op))
      throw ConfigError("filter " + Describe(term) + ": unknown operator '" + term.op +
                        "' (use =, !=, <, <=, >, >=)");
    auto field = FindColumn(schema, term.column);
    if (!field) throw ConfigError("filter " + Describe(term) + ": the table has no column '" +
                                  term.column + "'");
    auto literal = ParseLiteral(field->type(), term.value);
    if (!literal)
      throw ConfigError("filter " + Describe(term) + ": '" + term.value + "' is not a " +
                        field->type()->ToString() + " value");
    bound.push_back({field->name(), PhysicalName(*field), term.op, field->type(), literal});
  }
  return bound;
}

std::shared_ptr<arrow::Table> ApplyFilter(const std::shared_ptr<arrow::Table>& table,
                                          const std::vector<BoundFilterTerm>& filter) {
  if (filter.empty()) return table;
  arrow::Datum mask;
  for (const auto& term : filter) {
    auto column = table->GetColumnByName(term.column);
    if (!column) throw InternalError("filter: column '" + term.column + "' is not in the table read");
    auto matches = arrow::compute::CallFunction(ComparisonFunction(term.op), {column, term.literal});
    if (!matches.ok())
      throw InternalError("filter on '" + term.column + "' failed: " + matches.status().ToString());
    if (mask.is_value()) {
      auto both = arrow::compute::And(mask, *matches);
      if (!both.ok()) throw InternalError("filter: " + both.status().ToString());
      mask = *both;
    } else {
      mask = *matches;
    }
  }
  auto filtered = arrow::compute::Filter(table, mask, arrow::compute::FilterOptions::Defaults());
  if (!filtered.ok()) throw InternalError("filter: " + filtered.status().ToString());
  return filtered->table();
}

ColumnBounds BoundsOf(const ParsedFileStats& stats, const std::string& stats_column,
                      const std::shared_ptr<arrow::DataType>& type) {
  ColumnBounds bounds;
  bounds.min = ParseStat(stats.min_values, stats_column, type);
  bounds.max = WidenTimestampMax(ParseStat(stats.max_values, stats_column, type));
  if (auto nulls = stats.null_count.find(stats_column); nulls != stats.null_count.end()) {
    bounds.null_count = nulls->second;
  }
  return bounds;
}

bool StatsExcludeFile(const ParsedFileStats& stats, const std::vector<BoundFilterTerm>& filter) {
  for (const auto& term : filter) {
    auto nulls = stats.null_count.find(term.stats_column);
    if (stats.num_records && nulls != stats.null_count.end() &&
        nulls->second == *stats.num_records)
      return true;  // only NULLs: no comparison can be true
    const auto bounds = BoundsOf(stats, term.stats_column, term.type);
    if (RangeExcludes(term.op, bounds.min, bounds.max, term.literal)) return true;
  }
  return false;
}

}  // namespace mssql_cdc::delta
