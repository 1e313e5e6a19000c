// Chooses the clock that converts a source's commit times to UTC, from the sourceTimeZone
// option: "auto" asks the source for its zone (CURRENT_TIMEZONE_ID()); anything else is a
// Windows zone name. One rule for every backend and for both ways of running.
#pragma once

#include <string_view>

#include "core/timezone.h"
#include "source/source.h"

namespace mssql_cdc {

SourceClock ResolveSourceClock(Source& source, std::string_view source_time_zone);

}  // namespace mssql_cdc
