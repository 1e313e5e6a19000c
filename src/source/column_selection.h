// Which captured columns a read returns: the ones a request names, matched as SQL Server
// matches names (exactly, else ignoring case: name_match.h), in the order named; all of them
// when none is named. Every backend applies this rule.
#pragma once

#include <string>
#include <vector>

#include "source/source.h"

namespace mssql_cdc {

// Throws ConfigError naming the column for a name the instance does not capture (listing
// the ones it does) and for a column named twice.
std::vector<CapturedColumn> SelectColumns(const std::vector<CapturedColumn>& captured,
                                          const std::vector<std::string>& requested,
                                          const std::string& capture_instance);

// The names of `wanted` that `captured` holds (matched as SelectColumns matches), in the order
// of `wanted`: what a read of one instance asks for when a stream's columns span several.
std::vector<std::string> NamesCaptured(const std::vector<CapturedColumn>& captured,
                                       const std::vector<std::string>& wanted);

}  // namespace mssql_cdc
