// ASCII case folding, the way SQL Server's and Delta's identifiers compare: letters A-Z equal
// a-z, every other byte only itself (no locale, no Unicode folding).
#pragma once

#include <string_view>

namespace mssql_cdc {

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b);

}  // namespace mssql_cdc
