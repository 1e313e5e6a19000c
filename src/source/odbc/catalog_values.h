// Values of SQL Server's CDC catalog procedures turned into the engine's types: the
// index_column_list of sys.sp_cdc_help_change_data_capture and the type columns of
// sys.sp_cdc_get_captured_columns.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sql_type.h"

namespace mssql_cdc::odbc {

// "[a], [b]" -> {"a", "b"}, `]]` inside brackets standing for `]`; bare names are accepted
// too. Empty or NULL text gives no columns. Throws SourceError for an unclosed bracket.
std::vector<std::string> ParseIndexColumnList(std::string_view text);

// What sys.sp_cdc_get_captured_columns says of a column's type.
struct CatalogType {
  std::string data_type;                         // "nvarchar", "decimal", ...
  std::optional<std::int64_t> character_maximum_length;  // -1: (max)
  std::optional<std::int64_t> numeric_precision;
  std::optional<std::int64_t> numeric_scale;
  std::optional<std::int64_t> datetime_precision;
};

// The SqlType SqlType::Parse would give for the column's declaration: the length of char
// and binary types, precision and scale of decimal/numeric, the mantissa bits of float, the
// fractional digits of time, datetime2 and datetimeoffset; SQL Server's defaults where the
// catalog gives nothing. Throws SourceError naming `column` when the values make no type.
SqlType SqlTypeFromCatalog(const CatalogType& catalog, std::string_view column);

}  // namespace mssql_cdc::odbc
