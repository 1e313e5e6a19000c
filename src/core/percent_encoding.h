// Percent-encoding (RFC 3986) as the engine meets it: paths and query values of requests to a
// store, file:// URIs, Delta's add.path (a URI reference), proxy credentials.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc {

// Every byte but the unreserved A-Z a-z 0-9 - _ . ~ (and '/', when `keep_slash`) as %XX.
std::string PercentEncode(std::string_view text, bool keep_slash);

// %XX escapes decoded; nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text);

// %XX escapes decoded; a '%' not followed by two hex digits is kept as it is (how Spark and
// curl read add.path and a proxy's credentials).
std::string PercentDecodeLenient(std::string_view text);

}  // namespace mssql_cdc
