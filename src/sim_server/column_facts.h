// The type columns of sys.sp_cdc_get_captured_columns for one captured column, as SQL Server
// fills them (the INFORMATION_SCHEMA.COLUMNS rules): from data_type and these a client
// rebuilds the column's SqlType exactly: the length of char and binary types, the precision
// and scale of decimal and numeric, the fractional digits of time, datetime2 and
// datetimeoffset, the mantissa bits of float(n).
#pragma once

#include <optional>

#include "core/sql_type.h"

namespace mssql_cdc::sim_server {

struct ColumnFacts {
  // Characters of char types, bytes of binary types, -1 for (max) and xml; the fixed sizes
  // of text, ntext and image.
  std::optional<int> character_maximum_length;
  std::optional<int> numeric_precision;        // exact numerics, real and float(n)
  std::optional<int> numeric_precision_radix;  // 10 for exact numerics, 2 for real and float
  std::optional<int> numeric_scale;            // exact numerics
  std::optional<int> datetime_precision;       // fractional-second digits of date and time types
};

ColumnFacts FactsOf(const SqlType& type);

}  // namespace mssql_cdc::sim_server
