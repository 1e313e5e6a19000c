// The `columns` option: a Spark DDL list of captured columns and the types to read them as
// ("order_id INT, status STRING, amount DECIMAL(18,2)"), read into the output schema's Arrow
// fields. Names are identifiers or `back-quoted`; types are Spark's (BOOLEAN, TINYINT,
// SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR(n), CHAR(n), BINARY,
// DATE, TIMESTAMP, TIMESTAMP_NTZ), any case, with Spark's synonyms (BYTE, SHORT, INTEGER, LONG,
// REAL, DEC, NUMERIC, TIMESTAMP_LTZ).
#pragma once

#include <arrow/type_fwd.h>

#include <string_view>

namespace mssql_cdc {

// Nullable fields in the order given. Throws ConfigError naming the option, the part that is
// wrong and the form it takes: an empty list, a column without a type, an unknown type, a
// column listed twice (ignoring case).
arrow::FieldVector ParseSparkColumns(std::string_view ddl);

}  // namespace mssql_cdc
