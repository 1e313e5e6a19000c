// T-SQL's LIKE over names, as the catalog procedures match their patterns (sp_tables'
// @table_name with @fUsePattern = 1): `%` any run of characters, `_` one character, `[abc]`,
// `[a-c]` and `[^abc]` one of a set; letters compare ignoring ASCII case, as the server's
// collation does.
#pragma once

#include <string_view>

namespace mssql_cdc::sim_server {

bool LikeMatches(std::string_view pattern, std::string_view text);

}  // namespace mssql_cdc::sim_server
