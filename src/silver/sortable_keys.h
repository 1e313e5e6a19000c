// Keys as byte strings whose byte order is the keys' order: what the silver rebuild sorts its
// spilled runs by and merges them on, so that a run sorted in memory and a merge across runs
// agree on one order without comparing Arrow values column by column.
//
// Columns compare in turn; within one, NULL sorts after every value and equals NULL. Integers,
// dates, times and timestamps sort by value, decimals by value at their scale, floats by value,
// strings and binaries byte by byte (UTF-8's byte order is its code points' order). A type
// without an order of its own here sorts by its text: still one consistent order, equal
// exactly when the values are.
#pragma once

#include <arrow/type_fwd.h>

#include <string>
#include <vector>

namespace mssql_cdc {

// One sortable key per row of `rows`, from its `keys` columns (names as the rows spell them).
// InternalError for a missing column.
std::vector<std::string> SortableKeys(const arrow::RecordBatch& rows, const std::vector<std::string>& keys);

}  // namespace mssql_cdc
