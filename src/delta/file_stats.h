// Per-file statistics of a Delta data file, as Spark writes them into add.stats:
//   {"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...}}
// for the first `stats_columns` leaf columns (all when negative).
//
// What each column gets, following Delta's StatisticsCollection:
// - nullCount for every indexed column.
// - minValues/maxValues only for numbers, dates, timestamps and strings (not for booleans or
//   binary), and only when the column has a non-null value.
// - Strings: the min is the first 32 characters; a longer max is cut and given a tie-breaker
//   character (U+007F or U+10FFFF) so that it still bounds every value, or left out when no
//   short bound exists.
// - Decimals: JSON numbers as Java's BigDecimal.toString writes them ("12.50", "-1E-10").
// - Timestamps: ISO-8601 truncated down to milliseconds, "...T00:00:00.000Z" when the column
//   has a time zone, without the "Z" for timestamp_ntz. Dates: "YYYY-MM-DD".
// - Floating point: min/max leave out NaN; a column holding NaN gets no max (Spark would
//   write "NaN", which some readers cannot parse), and an infinite bound is left out.
// Struct, list and map columns count toward the leaf budget but get no stats here.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mssql_cdc::delta {

// The stats JSON of one file holding `columns` (one chunked array per field of `schema`).
std::string ComputeFileStats(const arrow::Schema& schema,
                             const std::vector<std::shared_ptr<arrow::ChunkedArray>>& columns,
                             std::int64_t num_records, int stats_columns);

// The same stats for a file written a part at a time, without keeping its rows: each Add
// folds in the columns of one part (a row group), keeping per column only its null count,
// its min and max values and whether it held a NaN; Json then gives what ComputeFileStats
// gives for all the parts at once.
class FileStatsAccumulator {
 public:
  FileStatsAccumulator(std::shared_ptr<arrow::Schema> schema, int stats_columns);

  void Add(const std::vector<std::shared_ptr<arrow::ChunkedArray>>& columns);
  // numRecords is the rows added, unless `num_records` is given.
  std::string Json(std::optional<std::int64_t> num_records = std::nullopt) const;

 private:
  struct ColumnStats {
    bool indexed = false;  // within the leaf budget and not nested
    std::int64_t null_count = 0;
    std::shared_ptr<arrow::Scalar> min, max;  // null until a non-null value was added
    bool has_nan = false;
  };
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<ColumnStats> columns_;
  std::int64_t rows_ = 0;
};

// The stats of one file, parsed back. Values keep their JSON text (numbers unrounded, strings
// unescaped), so that decimals and 64-bit integers compare exactly.
struct ParsedFileStats {
  std::optional<std::int64_t> num_records;
  std::map<std::string, std::string> min_values;  // top-level columns only
  std::map<std::string, std::string> max_values;
  std::map<std::string, std::int64_t> null_count;
};

// nullopt when `json` is not a stats object this reader understands: callers then treat the
// file as having no stats.
std::optional<ParsedFileStats> ParseFileStats(const std::string& json);

// Exposed for tests: Spark's truncation of a string min and max to `prefix` characters.
std::string TruncateMinString(const std::string& value, int prefix);
std::optional<std::string> TruncateMaxString(const std::string& value, int prefix);

}  // namespace mssql_cdc::delta
