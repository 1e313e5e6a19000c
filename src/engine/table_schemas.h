// The tables the engine writes, defined once: bronze (the change log of one capture
// instance), facts (one row per batch or event, shared by streams) and control (one verdict
// per table). Schemas, column comments, table comments and the mssql_cdc.schema_version
// property are a contract (docs/reference/tables.md, invariant 7 of docs/invariants.md): columns are only added.
// The Spark package takes the same definitions through the bindings.
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "delta/table.h"

namespace mssql_cdc {

inline constexpr char kSchemaVersionProperty[] = "mssql_cdc.schema_version";
// Set by a release whose tables older releases must not write at all (the reference library
// 0.8.0 names it the same): the number of migrations a writer must know.
inline constexpr char kMinVersionProperty[] = "mssql_cdc.min_version";

// Refuses, with ConfigError and before anything is written, a table that a newer release
// migrated past what this one knows: its mssql_cdc.schema_version or mssql_cdc.min_version
// (in `properties`) above `known`, or either not a whole number. Writing such a table would
// leave out what the newer release keeps in it. `what` names the kind ("facts table"),
// `where` the table as the user gave it.
void CheckSchemaVersion(const delta::StringMap& properties, int known, const std::string& what,
                        const std::string& where);

// The output schema of the capture instance followed by _batch_id INT, _snapshot STRING,
// _chunk INT; comments on the library-defined columns.
std::shared_ptr<arrow::Schema> BronzeSchema(const std::shared_ptr<arrow::Schema>& output_schema);
// The output schema `bronze` was made of (BronzeSchema's inverse): its columns but _batch_id,
// _snapshot and _chunk, for migrating a bronze table whose capture instance is not at hand.
std::shared_ptr<arrow::Schema> BronzeOutputSchema(const arrow::Schema& bronze);
// The 29 facts columns in the documented order and types.
std::shared_ptr<arrow::Schema> FactsSchema();
// The control table's columns.
std::shared_ptr<arrow::Schema> ControlSchema();

// Create options (schema, comment, properties) of each table. The bronze table's comment
// names its capture instance; an empty name leaves the name out.
delta::CreateOptions BronzeTableOptions(const std::shared_ptr<arrow::Schema>& output_schema,
                                        const std::string& capture_instance);
delta::CreateOptions FactsTableOptions();
delta::CreateOptions ControlTableOptions();
// A new plans table beside a bronze table, in the layout of one row per snapshot event
// (snapshot/plans_table.h).
delta::CreateOptions PlansTableOptions();

// The table at `uri`, created with `options` when there is none. A table that exists is
// opened as it is, whatever its schema: appends merge new columns into it (merge_schema).
delta::DeltaTable OpenOrCreateTable(const std::string& uri, const delta::CreateOptions& options);

enum class TableKind { kBronze, kFacts, kControl, kPlans };

// The columns every table of `kind` has had since its first version.
std::vector<std::string> RequiredColumns(TableKind kind);
// "bronze table", "facts table", "control table", "plans table".
const char* TableKindName(TableKind kind);
// The mssql_cdc.schema_version a table of `kind` is created with.
int SchemaVersionOf(TableKind kind);
// Whether a table of `kind` with these columns is a plans table in the layout of one row per
// event, mssql-cdc-pyspark 0.8.0's and the one this engine makes (plans_table.h): appended to as
// it is, its schema version 0.8.0's to count, never migrated.
bool IsReferencePlansTable(TableKind kind, const std::vector<std::string>& columns);
// ConfigError "<where> is not a <kind>: it has no '<column>' column; <fix>" when `columns`
// lack one of RequiredColumns(kind) (0.8.0's plans table passes).
void CheckTableColumns(const std::vector<std::string>& columns, TableKind kind,
                       const std::string& where, const std::string& fix);

// Refuses an existing table at `uri` that is not one of `kind` (ConfigError naming a column
// every table of that kind has and this one lacks): a target, facts or control path that
// names some other table fails before anything is written, not at its first append. Nothing
// happens when there is no table at `uri`.
void CheckExistingTable(const std::string& uri, TableKind kind);

// CheckExistingTable for a bronze table at `uri`, that the data files of its newest commits
// are there (SourceError with MissingFilesMessage otherwise), and that the table takes rows of
// `bronze_schema` as an append would (new columns appended, widenings where type widening is
// on, column mapping where a new column's name needs it): SchemaChangedError naming the column
// and giving the fix otherwise. Nothing is written.
void CheckExistingBronze(const std::string& uri, const std::shared_ptr<arrow::Schema>& bronze_schema);

// The data files of the newest commits a stream's start looks up (DeltaTable::MissingFiles).
inline constexpr int kNewestCommitsChecked = 10;

// What a table whose log names files the store lost says, with the way out: `missing` as
// DeltaTable::MissingFiles gives them.
std::string MissingFilesMessage(const std::string& what, const std::string& uri,
                                const std::vector<std::string>& missing);

// CheckExistingTable once per table for the streams of a group: a thousand streams that name
// one facts table read its log once at start, not a thousand times. Thread-safe.
class SharedTableChecks {
 public:
  void Check(const std::string& uri, TableKind kind);

 private:
  std::mutex mutex_;
  std::set<std::pair<std::string, TableKind>> checked_;
};

// A table's or checkpoint's location in one spelling, so that "bronze" and "./bronze" compare
// equal: paths as absolute normal forms, URIs as written.
std::string NormalLocation(const std::string& location);

}  // namespace mssql_cdc
