// Conjunctive row filters (FilterTerm: column <op> literal) for reading Delta tables: the
// literals parsed in the columns' types, the rows of a table that match, and whether a
// file's statistics prove that none of its rows can match.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delta/file_stats.h"
#include "delta/table.h"

namespace mssql_cdc::delta {

// One term with its column resolved in a schema and its literal parsed in the column's type.
struct BoundFilterTerm {
  std::string column;
  std::string stats_column;  // the column's name in file statistics (its physical name)
  std::string op;  // "=", "!=", "<", "<=", ">", ">="
  std::shared_ptr<arrow::DataType> type;
  std::shared_ptr<arrow::Scalar> literal;
};

// A value of `type` from its text: numbers, decimals ("-12.50"), dates (YYYY-MM-DD),
// timestamps (ISO-8601, a zone offset or "Z" allowed), strings, booleans. nullptr when the text
// is not such a value.
std::shared_ptr<arrow::Scalar> ParseLiteral(const std::shared_ptr<arrow::DataType>& type,
                                            const std::string& text);

// Throws ConfigError naming the term for an unknown column or operator or a literal that does
// not parse in the column's type (timestamps as ISO-8601, dates as YYYY-MM-DD).
std::vector<BoundFilterTerm> BindFilter(const arrow::Schema& schema,
                                        const std::vector<FilterTerm>& filter);

// The rows of `table` (in the schema the filter was bound to) matching every term; a NULL
// compares as no match.
std::shared_ptr<arrow::Table> ApplyFilter(const std::shared_ptr<arrow::Table>& table,
                                          const std::vector<BoundFilterTerm>& filter);

// True when the stats prove that no row of the file matches. Conservative: a missing or
// unparsable statistic never skips a file.
bool StatsExcludeFile(const ParsedFileStats& stats, const std::vector<BoundFilterTerm>& filter);

// What a file's statistics say of one column (named as in the stats: its physical name), in
// `type`: bounds every non-null value lies within (a truncated timestamp max widened to
// cover what truncation cut), null where the stats give none; and its null count.
struct ColumnBounds {
  std::shared_ptr<arrow::Scalar> min, max;
  std::optional<std::int64_t> null_count;
};
ColumnBounds BoundsOf(const ParsedFileStats& stats, const std::string& stats_column,
                      const std::shared_ptr<arrow::DataType>& type);

}  // namespace mssql_cdc::delta
