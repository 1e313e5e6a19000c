// The text forms of values the driver hands over as structures, written into Arrow's value
// buffer directly: uniqueidentifier as SQL Server prints it, time(n) as the sim stores it.
#pragma once

#include <cstddef>

#include "source/odbc/odbc_api.h"

namespace mssql_cdc::odbc {

inline constexpr std::size_t kGuidChars = 36;
inline constexpr std::size_t kTimeChars = 16;

// "6F9619FF-8B86-D011-B42D-00C04FC964FF" (upper case) into `out` (kGuidChars).
void FormatGuid(const SQLGUID& guid, char* out);
// "HH:MM:SS.fffffff", seven fraction digits whatever the column's scale, into `out`
// (kTimeChars).
void FormatTime(const SsTime2& time, char* out);

}  // namespace mssql_cdc::odbc
