// Tier 2 of reconcile (docs/reconcile.md): the rows of one key range read from the
// source beside the lake's rows of that range, matched on the key (NULL equal to NULL), every
// shared captured column compared. A source key the lake lacks is MISSING_TARGET, a lake key
// the source lacks MISSING_SOURCE, a key whose values differ RECORD_DIFF, with the lake row's
// _start_lsn and the columns that differ.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mssql_cdc {

inline constexpr char kMissingTarget[] = "MISSING_TARGET";
inline constexpr char kMissingSource[] = "MISSING_SOURCE";
inline constexpr char kRecordDiff[] = "RECORD_DIFF";

struct KeyFailure {
  nlohmann::json key;        // {"column": value, ...}
  std::string failure_type;  // kMissingTarget, kMissingSource, kRecordDiff
  std::string detail;        // JSON: silver_start_lsn and the differing columns
};

// The differences between `source` and `lake` rows over `keys`, comparing `columns` (each in
// both tables; the source's values cast to the lake's type first). `lake_is_whole_range`: the
// lake rows are all the lake holds in the range the source rows were read from, so a lake key
// the source lacks is MISSING_SOURCE; false when the lake rows were looked up by the source's
// keys (only MISSING_TARGET and RECORD_DIFF can be told then).
std::vector<KeyFailure> DiffRows(const arrow::Table& source, const arrow::Table& lake,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& columns, bool lake_is_whole_range);

// A key cell as JSON: integers and booleans as such, every other value as its text.
nlohmann::json KeyValueJson(const arrow::Array& column, std::int64_t row);

}  // namespace mssql_cdc
