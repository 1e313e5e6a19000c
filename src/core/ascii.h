// ASCII case folding, the way SQL Server's and Delta's identifiers compare: letters A-Z equal
// a-z, every other byte only itself (no locale, no Unicode folding).
#pragma once

#include <string>
#include <string_view>

namespace mssql_cdc {

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b);
// Letters A-Z lowered to a-z, every other byte kept (option names, keywords, HTTP header names).
std::string AsciiLower(std::string_view text);
// 0-15 for a hex digit (either case), -1 for any other byte.
int HexDigitValue(char c);
// `text` without the spaces, tabs, line breaks, vertical tabs and form feeds at either end.
std::string_view TrimAsciiSpace(std::string_view text);

}  // namespace mssql_cdc
