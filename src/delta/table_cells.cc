#include "delta/table_cells.h"

#include <arrow/api.h>

#include "core/errors.h"

namespace mssql_cdc::delta {
namespace {

std::shared_ptr<arrow::Scalar> Cell(const arrow::Table& table, const std::string& column,
                                    std::int64_t row) {
  auto scalar = ScalarCell(table, column, row);
  return scalar && scalar->is_valid ? scalar : nullptr;
}

}  // namespace

std::shared_ptr<arrow::Scalar> ScalarCell(const arrow::Table& table, const std::string& column,
                                          std::int64_t row) {
  auto values = table.GetColumnByName(column);
  if (!values) return nullptr;
  auto scalar = values->GetScalar(row);
  if (!scalar.ok()) {
    throw InternalError("reading column " + column + " at row " + std::to_string(row) + ": " +
                        scalar.status().ToString());
  }
  return *scalar;
}

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

std::shared_ptr<arrow::Array> WholeColumn(const arrow::ChunkedArray& column) {
  if (column.num_chunks() == 1) return column.chunk(0);
  auto combined = column.num_chunks() == 0 ? arrow::MakeEmptyArray(column.type()) : arrow::Concatenate(column.chunks());
  if (!combined.ok()) throw InternalError("combining a column's chunks: " + combined.status().ToString());
  return *combined;
}

std::optional<std::int64_t> TimestampCell(const arrow::Table& table, const std::string& column,
                                          std::int64_t row) {
  auto s = Cell(table, column, row);
  if (!s) return std::nullopt;
  return std::static_pointer_cast<arrow::TimestampScalar>(s)->value;
}

}  // namespace mssql_cdc::delta
