// One cell of an Arrow table read back from a Delta table (facts, plans, control rows), as an
// optional: nullopt for NULL or for a column the table lacks (an older table's schema).
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mssql_cdc::delta {

// A cell as an Arrow scalar, NULL included (to copy a row as it is stored); nullptr for a
// column the table lacks.
std::shared_ptr<arrow::Scalar> ScalarCell(const arrow::Table& table, const std::string& column,
                                          std::int64_t row);
std::optional<std::string> TextCell(const arrow::Table& table, const std::string& column, std::int64_t row);
// Any integer column, as int64.
std::optional<std::int64_t> IntCell(const arrow::Table& table, const std::string& column, std::int64_t row);
std::optional<double> DoubleCell(const arrow::Table& table, const std::string& column, std::int64_t row);
// A column's chunks as one array (an empty array of its type when it has none).
std::shared_ptr<arrow::Array> WholeColumn(const arrow::ChunkedArray& column);

// A timestamp column's value in its unit (microseconds for the engine's tables).
std::optional<std::int64_t> TimestampCell(const arrow::Table& table, const std::string& column,
                                          std::int64_t row);

}  // namespace mssql_cdc::delta
