// A stream position: the last processed commit LSN and its UTC commit time. Its JSON form is a
// persisted contract shared with the reference library:
//   {"lsn": "0x<20 uppercase hex>", "commit_ts": "YYYY-MM-DDTHH:MM:SS.mmm"}
// with commit_ts naive UTC at exactly milliseconds, or "" when unknown.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/lsn.h"
#include "core/time.h"

namespace mssql_cdc {

struct Offset {
  Lsn lsn;
  std::optional<UtcMicros> commit_ts;  // nullopt: unknown

  std::string ToJson() const;
  // Throws ConfigError naming the text when it is not an offset (bad JSON, missing "lsn",
  // malformed LSN or time).
  static Offset FromJson(std::string_view json);

  friend bool operator==(const Offset&, const Offset&) = default;
};

}  // namespace mssql_cdc
