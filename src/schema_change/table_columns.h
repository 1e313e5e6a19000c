// The captured columns a stream of a table reads when it infers them (docs/reference/tables.md):
// the union by name, ignoring case, of the columns of every capture instance of the table,
// older instances first, a newer instance's new columns appended. Where two instances type a
// column differently, the newer type wins when it holds the older's values (type_holds.h);
// otherwise the table has no one schema and SchemaChangedError says so and how to choose one.
#pragma once

#include <arrow/type_fwd.h>

#include <string>
#include <vector>

#include "source/source.h"

namespace mssql_cdc {

struct InstanceColumns {
  std::string capture_instance;
  std::vector<CapturedColumn> columns;  // in ordinal order
};

// `instances` oldest first. The result keeps each column's name and type as its newest
// instance reports them. With `check_types` off, a newer type that does not hold the older's
// is taken too (for the `columns` option, whose types the user chose).
std::vector<CapturedColumn> UnionOfInstances(const std::vector<InstanceColumns>& instances,
                                             bool check_types = true);

// The captured columns as the output schema's fields (core/sql_type.h's mapping), nullable.
arrow::FieldVector FieldsOf(const std::vector<CapturedColumn>& columns);

// The columns of `captured` (an instance's) that `reads` lacks or types so that it cannot
// hold them: what a stream reading with `reads` would lose or fail on when that instance takes
// over. Names match ignoring case.
std::vector<CapturedColumn> ColumnsNotHeld(const arrow::FieldVector& reads,
                                           const std::vector<CapturedColumn>& captured);

// The columns the `columns` option lists (core/spark_columns.h), checked against the table's
// columns (UnionOfInstances): each must be captured by an instance of the table, and its
// captured type castable to the type listed. Returns the captured columns in the listed order
// and sets `fields` to the listed fields under the names SQL Server spells. Throws ConfigError
// naming the column and the columns there are.
std::vector<CapturedColumn> SelectListedColumns(arrow::FieldVector& fields,
                                                const std::vector<CapturedColumn>& table_columns,
                                                const std::string& table);

// "name TYPE, name TYPE" with the Spark type names, for messages.
std::string DescribeColumns(const std::vector<CapturedColumn>& columns);
std::string DescribeFields(const arrow::FieldVector& fields);

}  // namespace mssql_cdc
