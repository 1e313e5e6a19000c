// A one-column key's value, in its units (silver/key_units.h), as the Spark SQL literal of the
// key's own type: what silver's range deletes and reconcile's bucket reads compare keys with.
#pragma once

#include <cstdint>
#include <string>

#include "silver/key_units.h"

namespace mssql_cdc::catalog {

// CAST(v AS BIGINT), DATE 'YYYY-MM-DD' or CAST('YYYY-MM-DD HH:MM:SS.ffffff' AS TIMESTAMP_NTZ).
std::string KeyLiteralSql(std::int64_t value, KeyUnit unit);

}  // namespace mssql_cdc::catalog
