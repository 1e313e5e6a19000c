#include "silver/key_units.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "core/errors.h"
#include "delta/compute_kernels.h"

namespace mssql_cdc {

std::optional<KeyUnit> KeyUnitOf(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8: case arrow::Type::INT16: case arrow::Type::INT32: case arrow::Type::INT64:
    case arrow::Type::UINT8: case arrow::Type::UINT16: case arrow::Type::UINT32:
      return KeyUnit::kInteger;
    case arrow::Type::DATE32:
      return KeyUnit::kDay;
    case arrow::Type::TIMESTAMP: {
      const auto& timestamp = static_cast<const arrow::TimestampType&>(type);
      if (timestamp.unit() != arrow::TimeUnit::MICRO || !timestamp.timezone().empty()) return std::nullopt;
      return KeyUnit::kMicros;
    }
    default:
      return std::nullopt;
  }
}

std::shared_ptr<arrow::Int64Array> KeyUnitValues(const arrow::Array& column) {
  delta::EnsureComputeKernels();
  std::shared_ptr<arrow::Array> values = column.Slice(0);
  // A date reads as its day number, a timestamp as its microseconds: casts Arrow makes without
  // touching the values.
  if (column.type_id() == arrow::Type::DATE32) {
    auto days = arrow::compute::Cast(*values, arrow::int32());
    if (!days.ok()) throw InternalError("reading key days: " + days.status().ToString());
    values = *days;
  }
  auto cast = arrow::compute::Cast(*values, arrow::int64());
  if (!cast.ok()) throw InternalError("reading key values: " + cast.status().ToString());
  return std::static_pointer_cast<arrow::Int64Array>(*cast);
}

}  // namespace mssql_cdc
