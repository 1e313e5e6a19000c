// What a statement of sys.sp_cdc_get_ddl_history does to a captured table, read from its text
// (docs/schema-changes.md's table of DDL kinds). SQL Server records the statement as it was
// sent, so the text is matched by its keywords, ignoring case, brackets and spacing.
#pragma once

#include <string_view>

namespace mssql_cdc {

enum class DdlKind {
  kAddColumn,    // ALTER TABLE ... ADD <column>: the column arrives with a new capture instance
  kDropColumn,   // ALTER TABLE ... DROP COLUMN: captured on, NULL from then on
  kAlterColumn,  // ALTER TABLE ... ALTER COLUMN: the captured type changes
  kOther,        // anything else (constraints, indexes, ...): nothing for a stream to do
};

DdlKind ClassifyDdl(std::string_view ddl_command);

// "add column", "drop column", "alter column", "other DDL", for messages.
std::string_view DdlKindName(DdlKind kind);

}  // namespace mssql_cdc
