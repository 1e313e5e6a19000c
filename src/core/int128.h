// 128-bit integers for sums that pass bigint: SQL Server's SUM(CAST(k AS decimal(38,0))) over a
// bigint key, and the same sum computed on the lake's side. Text is what SQL Server prints for
// decimal(38,0): an optional '-' and the digits.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc {

using Int128 = __int128;

std::string Int128Text(Int128 value);
// nullopt for text that is not an integer of decimal(38,0)'s range ("12.0" is one; "1e3" is not).
std::optional<Int128> ParseInt128(std::string_view text);

}  // namespace mssql_cdc
