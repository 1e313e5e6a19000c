// Delta column mapping in 'name' mode: a column has a logical name, which readers see, and a
// physical name and an id, which data files and their statistics use (the protocol's
// delta.columnMapping.* column metadata and the table property delta.columnMapping.maxColumnId).
//
// Spark stores no column whose name holds a space or one of ,;{}()=\n\t without mapping, so a
// table created with such a name gets mode 'name'. An existing table is never switched by this
// engine: a new column that needs mapping on a table without it is a SchemaChangedError whose
// message gives the ALTER TABLE that switches it. Mode 'id' is refused: this engine does not
// match columns by Parquet field id.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <string_view>

#include "delta/actions.h"
#include "delta/table_options.h"

namespace mssql_cdc::delta {

inline constexpr char kColumnMappingMode[] = "delta.columnMapping.mode";
inline constexpr char kColumnMappingMaxId[] = "delta.columnMapping.maxColumnId";
inline constexpr char kColumnMappingId[] = "delta.columnMapping.id";
inline constexpr char kColumnMappingPhysicalName[] = "delta.columnMapping.physicalName";

enum class ColumnMappingMode { kNone, kName };

// Whether Spark needs column mapping to store a column called `name`.
bool NameNeedsColumnMapping(std::string_view name);

// The table's mode: kNone when the property is unset. ConfigError naming `table` for 'id' or
// any value but 'none' and 'name'.
ColumnMappingMode ColumnMappingModeOf(const StringMap& configuration, const std::string& table);

// The name a column has in data files and statistics: its physical name, or its name on a
// table without mapping.
std::string PhysicalName(const arrow::Field& field);

// `schema` as data files hold it: each mapped column under its physical name with its id as
// the Parquet field id. `schema` itself when no column is mapped.
std::shared_ptr<arrow::Schema> PhysicalSchema(const std::shared_ptr<arrow::Schema>& schema);

// `properties` of a new table whose columns are `schema`: mode 'name' added when a column needs
// it and no mode is given. ConfigError naming the column when the mode is given as 'none'.
StringMap WithColumnMappingMode(const arrow::Schema& schema, StringMap properties,
                                const std::string& table);

// `schema` (a table's, after a merge) with an id and a physical name for every column that has
// none, when the table's mode is 'name'; `configuration`'s maxColumnId follows. On a table
// without mapping, a column that needs it is a SchemaChangedError naming it and `table` and
// giving the ALTER TABLE that enables mapping.
std::shared_ptr<arrow::Schema> MapNewColumns(const arrow::Schema& schema, StringMap& configuration,
                                             const std::string& table);

// The SchemaChangedError for a new column `column` that needs mapping on `table`, which has
// none: it names both and gives EnableColumnMappingSql(sql_name).
[[noreturn]] void ThrowNeedsColumnMapping(const std::string& column, const std::string& table,
                                          const std::string& sql_name);

// The statement that enables mapping on a table without it (`sql_name` as SQL names it).
std::string EnableColumnMappingSql(const std::string& sql_name);

}  // namespace mssql_cdc::delta
