// What a silver table is made of (docs/reference/tables.md): one row per source key, the
// captured columns as bronze holds them, then _start_lsn (the commit LSN of the row's current
// image, or the snapshot's LSN when unchanged since) and _commit_ts. Bronze's other metadata
// columns stay in bronze. Both modes take the silver schema and the key rule from here.
#pragma once

#include <arrow/type_fwd.h>

#include <memory>
#include <string>
#include <vector>

#include "delta/table.h"

namespace mssql_cdc {

inline constexpr char kSilverSchemaVersion[] = "0";
// The property that ties a silver table to its bronze: bronze's Delta table id, which stays
// when bronze is renamed or moved.
inline constexpr char kBronzeIdProperty[] = "mssql_cdc.bronze_id";

// The captured columns of a bronze schema, in bronze's order: every column that is neither
// a metadata column of the output schema nor one bronze adds.
std::vector<std::string> CapturedColumnNames(const arrow::Schema& bronze);

// The silver schema of a bronze schema: its captured columns, then _start_lsn and _commit_ts.
std::shared_ptr<arrow::Schema> SilverSchema(const arrow::Schema& bronze);

// The create options of a silver table of `bronze` (schema, comment, schema version, bronze's
// table id); column mapping by name when a captured column's name needs it, as bronze has. An
// empty `bronze_name` leaves the name out of the table's comment.
delta::CreateOptions SilverTableOptions(const arrow::Schema& bronze, const std::string& bronze_name,
                                        const std::string& bronze_id);

// `keys` in bronze's spelling (names matched ignoring case). ConfigError, naming the key and
// the captured columns, for an empty list, a key given twice, or a key that is not a captured
// column of bronze (a metadata column included).
std::vector<std::string> ResolveSilverKeys(const std::vector<std::string>& keys,
                                           const arrow::Schema& bronze, const std::string& bronze_name);

// ConfigError when an existing silver table is not silver of this bronze: it lacks a key or
// _start_lsn, holds a column bronze never captured, or was created from a bronze table of
// another Delta table id. `silver` and `properties` are the existing table's.
void CheckSilverOfBronze(const arrow::Schema& silver, const delta::StringMap& properties,
                         const std::string& silver_name, const arrow::Schema& bronze,
                         const std::string& bronze_name, const std::string& bronze_id,
                         const std::vector<std::string>& keys);

// ConfigError when bronze `bronze_name` holds rows of a capture instance (`found`) that is not
// one of the table's (`allowed`, names matched ignoring case).
void CheckSilverInstances(const std::vector<std::string>& found, const std::vector<std::string>& allowed,
                          const std::string& bronze_name);

}  // namespace mssql_cdc
