// The engine's tables under a name in a catalog: the Spark SQL that creates them, checks and
// migrates them, and moves a verdict forward in a named control table.
//
// A named table is column for column the table the native engine writes at a path: the same
// columns, types, comments, table comment and mssql_cdc.schema_version, from the same
// definitions (engine/table_schemas.h). Spark runs the statements, so the session's catalog
// (a Hive metastore, Unity Catalog, ...) decides where the table is stored; nothing here
// knows or guesses a storage location.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <arrow/type_fwd.h>
#include <vector>

#include "core/offset.h"
#include "core/table_ref.h"
#include "delta/table.h"
#include "engine/finalization.h"
#include "engine/table_schemas.h"

namespace mssql_cdc::catalog {

// One column's definition as CREATE TABLE and ADD COLUMNS take it: `name` TYPE [NOT NULL]
// [COMMENT '...'].
std::string ColumnDefinitionSql(const arrow::Field& field);

// CREATE TABLE IF NOT EXISTS <name> (<columns>) USING delta COMMENT ... TBLPROPERTIES (...).
std::string CreateTableSql(const TableRef& name, const delta::CreateOptions& definition);

// CREATE TABLE sets delta.columnMapping.mode='name' when a column's name needs it
// (delta/column_mapping.h), as DeltaTable::Create does for a table at a path.
//
// What an existing named table needs to become `definition`: ConfigError when it is not a
// table of `kind` (a required column is missing) or when one of its columns has a type the
// definition's data cannot be written into; SchemaChangedError, giving the ALTER TABLE that
// enables column mapping, when a column it lacks needs mapping and the table has none;
// otherwise the statements that add the columns it lacks (with their comments) and set its
// schema version, empty when it is up to date. `existing_schema_json` is the table's schema
// as Spark gives it (StructType JSON), `existing_properties` its table properties.
std::vector<std::string> MigrateTableSql(const TableRef& name, TableKind kind,
                                         const std::string& existing_schema_json,
                                         const delta::StringMap& existing_properties,
                                         const delta::CreateOptions& definition);

// A column as the reference library's table helpers take one (mssql_cdc.tables.ColumnDef):
// its name, its Spark SQL type as text ("BIGINT", "decimal(18,2)", "array<string>") and its
// comment.
struct ColumnDef {
  std::string name;
  std::string type;
  std::optional<std::string> comment;
};

// CREATE TABLE IF NOT EXISTS of `columns` at `table` (a name, or delta.`path`), with the
// table's comment and properties; delta.columnMapping.mode = 'name' is added when a column's
// name needs it. ConfigError for no columns, or a type that is not Spark SQL type text.
std::string CreateTableSql(const TableRef& table, const std::vector<ColumnDef>& columns,
                           const std::optional<std::string>& comment,
                           const delta::StringMap& properties);

// ALTER TABLE ... ADD COLUMNS of those `columns` whose names the table's columns (`existing`)
// lack, ignoring case; empty when it has them all. Added columns are nullable: rows already
// written hold NULL in them.
std::string AddColumnsSql(const TableRef& table, const std::vector<std::string>& existing,
                          const std::vector<ColumnDef>& columns);

// The statements that set the comments of the named columns, then the table's comment.
std::vector<std::string> SetCommentsSql(
    const TableRef& table, const std::vector<std::pair<std::string, std::string>>& columns,
    const std::optional<std::string>& table_comment);

// The MERGE that moves `table_name`'s verdict in the named control table to
// truncate(end.commit_ts, granularity) when that is later than the stored one, or inserts it
// when none is stored; it changes nothing otherwise, so concurrent writers never move a
// verdict backwards (Delta's conflict detection makes a loser retry). Empty when `end` has
// no commit time.
std::string AdvanceVerdictSql(const TableRef& control, const std::string& table_name,
                              const Offset& end, Granularity granularity);

}  // namespace mssql_cdc::catalog
