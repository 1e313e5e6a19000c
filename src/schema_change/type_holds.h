// Whether a column's type still holds the values of another type (docs/schema-changes.md):
// the one rule by which a stream decides that a type change continues, that two capture
// instances' types of a column agree, and that a new instance's column fits the schema it
// reads with. Types are the output schema's Arrow types (core/sql_type.h's mapping).
//
// A type holds: itself; a narrower integer (int8 < int16 < int32 < int64); float32 in
// float64; a date in timestamp without time zone; int8, int16 and int32 in float64 (not
// int64, which a double cannot hold exactly); an integer in a decimal with at least 3, 5, 10
// or 20 integer digits for int8, int16, int32, int64; a decimal in a decimal with at least its
// scale and its integer digits.
#pragma once

#include <arrow/type_fwd.h>

namespace mssql_cdc {

// Whether a column of type `column` holds every value of type `incoming`.
bool TypeHolds(const arrow::DataType& column, const arrow::DataType& incoming);

}  // namespace mssql_cdc
