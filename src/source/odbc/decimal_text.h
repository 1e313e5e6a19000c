// Decimal values as drivers print them for SQL_C_CHAR ("-12.3400", ".5", "100") turned into
// Arrow's Decimal128 at a column's precision and scale, without allocating: the hot loop of
// reading decimal, numeric, money and smallmoney columns.
#pragma once

#include <arrow/util/decimal.h>

#include <optional>
#include <string_view>

namespace mssql_cdc::odbc {

// The value of `text` scaled to `scale` digits; nullopt when it is not a plain decimal
// number, has more fraction digits than `scale`, or does not fit `precision`.
std::optional<arrow::Decimal128> DecimalFromText(std::string_view text, int precision, int scale);

}  // namespace mssql_cdc::odbc
