// Values for generated rows: random ones valid for any SQL type the simulator holds, and
// distinct key values numbered 1, 2, 3... Both are deterministic for a given Random state.
#pragma once

#include <cstdint>

#include "core/sql_type.h"
#include "sim/random.h"
#include "sim/value.h"

namespace mssql_cdc::sim {

// A random non-NULL value of `type` that EncodeValue accepts. Not for rowversion columns.
Value RandomValue(const SqlType& type, Random& random);

// The n-th key value of a key column of `type` (n >= 1). Different n give different values
// as far as the type's range allows (a tinyint wraps after 256).
Value KeyValue(const SqlType& type, std::int64_t n);

}  // namespace mssql_cdc::sim
