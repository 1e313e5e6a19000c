#include "source/source_clock.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace mssql_cdc {

SourceClock ResolveSourceClock(Source& source, std::string_view source_time_zone) {
  std::string lowered(source_time_zone);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lowered.empty() || lowered == "auto") {
    return SourceClock::ForWindowsZone(source.ServerTimeZone());
  }
  return SourceClock::ForWindowsZone(source_time_zone);
}

}  // namespace mssql_cdc
