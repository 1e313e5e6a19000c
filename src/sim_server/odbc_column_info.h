// What sp_columns_100 reports of a column of a SQL Server type when asked for ODBC 3 metadata
// (@ODBCVer = 3), as Microsoft's JDBC driver asks for DatabaseMetaData.getColumns: the ODBC
// type code, column size, buffer length, scale, radix, SQL_DATA_TYPE, SQL_DATETIME_SUB and
// octet length. Values follow Microsoft's documentation of SQLColumns for SQL Server and the
// ODBC column-size and octet-length rules; (max) types report 0, which the driver turns into
// 2147483647.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/sql_type.h"

namespace mssql_cdc::sim_server {

struct OdbcColumnInfo {
  int data_type = 0;
  std::string type_name;  // as SQL Server names it: "timestamp" for rowversion
  std::optional<std::int64_t> precision;
  std::optional<std::int64_t> length;
  std::optional<int> scale;
  std::optional<int> radix;
  int sql_data_type = 0;
  std::optional<int> datetime_sub;
  std::optional<std::int64_t> octet_length;
  // SS_DATA_TYPE, the legacy type code; only where Microsoft's material establishes it (int
  // NOT NULL 56, the date and time types), else nullopt.
  std::optional<int> ss_data_type;
};

OdbcColumnInfo OdbcColumnInfoOf(const SqlType& type, bool nullable);

}  // namespace mssql_cdc::sim_server
