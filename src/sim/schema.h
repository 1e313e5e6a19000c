// Names and definitions of simulated tables and capture instances, and the catalog rows that
// describe them as the simulator reads them back.
//
// Names follow SQL Server's regular identifiers (a letter or _ first, then letters, digits,
// _, @, $, #; at most 128 characters, 100 for a capture instance) so that nothing a user
// types reaches SQL unchecked; they compare ignoring case, as SQL Server's default collation
// does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ascii.h"
#include "core/lsn.h"
#include "core/sql_type.h"

namespace mssql_cdc::sim {

struct TableName {
  std::string schema = "dbo";
  std::string name;
  // "dbo.customers".
  std::string ToString() const { return schema + "." + name; }
  // "dbo_customers": the default capture instance name.
  std::string DefaultCaptureInstance() const { return schema + "_" + name; }
};

// "table", "schema.table", "[schema].[table]"; the schema defaults to dbo. Throws ConfigError.
TableName ParseTableName(std::string_view text);
// Throws ConfigError naming `what` when `name` is not a regular identifier of at most
// `max_length` characters.
void CheckIdentifier(std::string_view name, std::string_view what, std::size_t max_length = 128);
// Throws ConfigError naming `what` when `name` is not a column name SQL Server takes as a
// delimited identifier ([Qty (kg)]): 1 to 128 characters, no control character and no ']'.
void CheckColumnName(std::string_view name, std::string_view what);
// Case-insensitive equality of two identifiers.
inline bool SameName(std::string_view a, std::string_view b) {
  return EqualsIgnoringAsciiCase(a, b);
}

struct ColumnDef {
  std::string name;
  SqlType type;
  bool nullable = true;
};

// "name type [NULL | NOT NULL]", e.g. "amount decimal(18, 2) not null". SQL Server's default
// is NULL. Throws ConfigError naming the declaration.
ColumnDef ParseColumnDeclaration(std::string_view text);

struct TableDef {
  TableName name;
  std::vector<ColumnDef> columns;
  std::vector<std::string> primary_key;  // column names in key order; at least one
};

// A live column of a source table (sim_columns).
struct ColumnInfo {
  int column_id = 0;
  std::string name;
  SqlType type;
  bool nullable = true;
  int key_ordinal = 0;  // 1.. in primary-key order, 0 when not a key column
};

struct TableInfo {
  std::int64_t object_id = 0;
  TableName name;
  std::vector<ColumnInfo> columns;  // by column_id
  std::vector<std::string> key;     // primary-key column names in key order

  // The live column named `name` (ignoring case), or null.
  const ColumnInfo* Find(std::string_view name) const;
  const ColumnInfo* FindById(int column_id) const;
};

// A captured column of a capture instance (cdc_captured_columns).
struct CapturedColumnInfo {
  std::string name;
  int column_id = 0;   // the source column's id, which may since have been dropped
  SqlType type;
  int ordinal = 0;     // 1-based; the bit of __$update_mask
};

// A capture instance (cdc_change_tables with its columns).
struct CaptureInstance {
  std::int64_t object_id = 0;
  std::string name;
  TableName table;
  std::int64_t source_object_id = 0;
  Lsn start_lsn;                // min LSN
  std::string create_date;      // server local time, "YYYY-MM-DD HH:MM:SS.fff"
  std::vector<CapturedColumnInfo> columns;   // by ordinal
  std::vector<std::string> index_columns;    // key columns in index order
};

}  // namespace mssql_cdc::sim
