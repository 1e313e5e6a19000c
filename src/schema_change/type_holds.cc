#include "schema_change/type_holds.h"

#include <arrow/type.h>

namespace mssql_cdc {
namespace {

// The width rank of an integer type, 0 for a non-integer.
int IntegerRank(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::INT8: return 1;
    case arrow::Type::INT16: return 2;
    case arrow::Type::INT32: return 3;
    case arrow::Type::INT64: return 4;
    default: return 0;
  }
}

// The integer digits a decimal needs to hold every value of an integer of `rank`.
int IntegerDigits(int rank) {
  switch (rank) {
    case 1: return 3;
    case 2: return 5;
    case 3: return 10;
    default: return 20;
  }
}

bool IsDecimal(const arrow::DataType& type) {
  return type.id() == arrow::Type::DECIMAL128 || type.id() == arrow::Type::DECIMAL256;
}

bool IsTimestampWithoutZone(const arrow::DataType& type) {
  return type.id() == arrow::Type::TIMESTAMP &&
         static_cast<const arrow::TimestampType&>(type).timezone().empty();
}

}  // namespace

bool TypeHolds(const arrow::DataType& column, const arrow::DataType& incoming) {
  if (column.Equals(incoming)) return true;
  const int to_rank = IntegerRank(column);
  const int from_rank = IntegerRank(incoming);
  if (from_rank > 0) {
    if (to_rank > 0) return to_rank >= from_rank;
    if (column.id() == arrow::Type::DOUBLE) return from_rank <= 3;
    if (IsDecimal(column)) {
      const auto& d = static_cast<const arrow::DecimalType&>(column);
      return d.precision() - d.scale() >= IntegerDigits(from_rank);
    }
    return false;
  }
  if (incoming.id() == arrow::Type::FLOAT) return column.id() == arrow::Type::DOUBLE;
  if (incoming.id() == arrow::Type::DATE32) return IsTimestampWithoutZone(column);
  if (IsDecimal(incoming) && IsDecimal(column)) {
    const auto& from = static_cast<const arrow::DecimalType&>(incoming);
    const auto& to = static_cast<const arrow::DecimalType&>(column);
    return to.scale() >= from.scale() &&
           to.precision() - to.scale() >= from.precision() - from.scale();
  }
  return false;
}

}  // namespace mssql_cdc
