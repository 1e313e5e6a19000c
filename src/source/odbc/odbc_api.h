// The ODBC headers, plus the SQL Server extensions of the Microsoft driver that FreeTDS
// implements too (msodbcsql.h is not installed on Linux build machines): the SQL types
// drivers describe columns with, and the structures time(n) and datetimeoffset(n) values
// come in when fetched as SQL_C_BINARY.
#pragma once

// clang-format off: sql.h must come before sqlext.h and sqlucode.h.
#include <sql.h>
#include <sqlext.h>
#include <sqlucode.h>
// clang-format on

// unixODBC defines BOOL as a macro, which would rewrite arrow::Type::BOOL in any file that
// includes Arrow after this one.
#ifdef BOOL
#undef BOOL
#endif

namespace mssql_cdc::odbc {

// SQL types SQL Server reports beyond the ODBC standard ones.
inline constexpr SQLSMALLINT kSqlSsVariant = -150;
inline constexpr SQLSMALLINT kSqlSsXml = -152;
inline constexpr SQLSMALLINT kSqlSsTime2 = -154;
inline constexpr SQLSMALLINT kSqlSsTimestampOffset = -155;

struct SsTime2 {
  SQLUSMALLINT hour;
  SQLUSMALLINT minute;
  SQLUSMALLINT second;
  SQLUINTEGER fraction;  // nanoseconds
};

struct SsTimestampOffset {
  SQLSMALLINT year;
  SQLUSMALLINT month;
  SQLUSMALLINT day;
  SQLUSMALLINT hour;
  SQLUSMALLINT minute;
  SQLUSMALLINT second;
  SQLUINTEGER fraction;  // nanoseconds
  SQLSMALLINT timezone_hour;
  SQLSMALLINT timezone_minute;
};

// True for an ODBC return code that means the call worked (perhaps with a message).
inline bool Succeeded(SQLRETURN rc) { return rc == SQL_SUCCESS || rc == SQL_SUCCESS_WITH_INFO; }

}  // namespace mssql_cdc::odbc
