// Table schemas: the Arrow schema of a Delta table and its schemaString JSON, and the rules
// by which an incoming batch schema may change a table's schema.
//
// Columns map one to one: string, long, integer, short, byte, float, double, boolean,
// binary, date, timestamp (Arrow timestamp[us, UTC]), timestamp_ntz (Arrow timestamp[us]
// without a time zone) and decimal(p,s). Nullability is kept; the Arrow field metadata key
// "comment" is the Delta column comment, and other column metadata (delta.typeChanges, ...)
// travels as Arrow field metadata holding its JSON text.
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc::delta {

// The Delta type name of an Arrow type ("long", "decimal(10,2)", ...). Throws
// UnsupportedTypeError naming `column` for an Arrow type Delta tables here cannot hold.
std::string DeltaTypeName(const arrow::DataType& type, const std::string& column);
// The Arrow type a column of Delta type `name` is read and written as.
std::shared_ptr<arrow::DataType> ArrowTypeOf(const std::string& name, std::string_view where);

// A nullable column with its Delta column comment.
std::shared_ptr<arrow::Field> CommentedField(std::string name, std::shared_ptr<arrow::DataType> type,
                                             const std::string& comment);
// A column's Delta column comment; nullopt when it has none.
std::optional<std::string> FieldComment(const arrow::Field& field);

std::string ToDeltaSchemaString(const arrow::Schema& schema);
// Throws SourceError naming `where` when the JSON is not a Delta struct schema of the types
// above.
std::shared_ptr<arrow::Schema> FromDeltaSchemaString(const std::string& json,
                                                     std::string_view where);

// Whether the Delta protocol's type widening allows changing a column from `from` to `to`
// (Delta type names).
bool IsTypeWidening(const std::string& from, const std::string& to);

// True when both schemas have the same columns, in order, with the same Delta types and
// nullability (comments and other metadata aside).
// `batch` with the columns of `schema`, in its order and types: columns matched by name
// ignoring case, a column the batch lacks is all NULL, a narrower type is cast up (timestamps
// truncated to microseconds). SchemaChangedError when a column cannot be cast, ConfigError
// when a NOT NULL column gets NULLs; `table` names the table in both.
std::shared_ptr<arrow::RecordBatch> AlignBatchToSchema(const arrow::RecordBatch& batch,
                                                       const std::shared_ptr<arrow::Schema>& schema,
                                                       const std::string& table);

bool SameColumns(const arrow::Schema& a, const arrow::Schema& b);
// A table at a path as Spark SQL names it, for statements in messages: delta.`<path>`, a
// backtick in the path doubled.
std::string PathTableSql(const std::string& path);

// "name type, name type, ..." on one line, for messages.
std::string ColumnList(const arrow::Schema& schema);

struct SchemaMergeRules {
  bool add_columns = true;             // mergeSchema: new columns are appended
  bool type_widening_enabled = false;  // the table property delta.enableTypeWidening=true
  std::string table;                   // named in error messages
  // How SQL names the table in a statement an error message suggests: its quoted name when it
  // has one, delta.`<path>` (PathTableSql) when empty.
  std::string table_sql;
};

// Whether a table's properties turn type widening on (delta.enableTypeWidening, any case).
bool TypeWideningEnabled(const std::map<std::string, std::string>& properties);

struct SchemaMergeResult {
  std::shared_ptr<arrow::Schema> schema;  // the table schema after the merge
  bool changed = false;                   // a column was added or widened
  bool widened = false;                   // a column's type was widened
};

// Merges the schema of incoming data into the table's: columns are matched by name, ignoring
// case (Delta column names are unique regardless of case); new ones are appended as nullable;
// a column whose incoming type is narrower keeps the table's type (the data is cast); a wider
// incoming type widens the column when type widening is enabled and allows it, recording the
// change in the column's delta.typeChanges. Any other difference throws SchemaChangedError
// naming the column, both types and the fix.
SchemaMergeResult MergeSchemas(const arrow::Schema& table, const arrow::Schema& incoming,
                               const SchemaMergeRules& rules);

}  // namespace mssql_cdc::delta
