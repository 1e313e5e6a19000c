#include "delta/table_cells.h"

#include <arrow/api.h>

namespace mssql_cdc::delta {
namespace {

std::shared_ptr<arrow::Scalar> Cell(const arrow::Table& table, const std::string& column,
                                    std::int64_t row) {
  auto values = table.GetColumnByName(column);
  if (!values) return nullptr;
  auto scalar = values->GetScalar(row);
  if (!scalar.ok() || !(*scalar)->is_valid) return nullptr;
  return *scalar;
}

}  // namespace

std::optional<std::string> TextCell(const arrow::Table& table, const std::string& column, std::int64_t row) {
  auto s = Cell(table, column, row);
  if (!s) return std::nullopt;
  return std::string(std::static_pointer_cast<arrow::BaseBinaryScalar>(s)->view());
}

std::optional<std::int64_t> IntCell(const arrow::Table& table, const std::string& column, std::int64_t row) {
  auto s = Cell(table, column, row);
  if (!s) return std::nullopt;
  auto cast = s->CastTo(arrow::int64());
  if (!cast.ok()) return std::nullopt;
  return std::static_pointer_cast<arrow::Int64Scalar>(*cast)->value;
}

std::optional<double> DoubleCell(const arrow::Table& table, const std::string& column, std::int64_t row) {
  auto s = Cell(table, column, row);
  if (!s) return std::nullopt;
  return std::static_pointer_cast<arrow::DoubleScalar>(s)->value;
}

std::optional<std::int64_t> TimestampCell(const arrow::Table& table, const std::string& column,
                                          std::int64_t row) {
  auto s = Cell(table, column, row);
  if (!s) return std::nullopt;
  return std::static_pointer_cast<arrow::TimestampScalar>(s)->value;
}

}  // namespace mssql_cdc::delta
