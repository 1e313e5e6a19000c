// A one-column key's values as 64-bit integers that order as the keys do: an integer as it is,
// a date as its day number since 1970-01-01, a timestamp without a zone as its microseconds.
// What silver's range deletes and reconcile's Tier 1 compare keys in.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace mssql_cdc {

enum class KeyUnit { kInteger, kDay, kMicros };

// The unit of a key column of Arrow type `type`; nullopt for other types.
std::optional<KeyUnit> KeyUnitOf(const arrow::DataType& type);
// A column's values in the key's units (NULL stays NULL).
std::shared_ptr<arrow::Int64Array> KeyUnitValues(const arrow::Array& column);

}  // namespace mssql_cdc
