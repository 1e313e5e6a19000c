#include "catalog/table_sql.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/time.h"
#include "core/user_text.h"
#include "delta/column_mapping.h"
#include "delta/schema.h"

namespace mssql_cdc::catalog {
namespace {

// Spark SQL's name of a Delta type.
std::string SqlTypeName(const std::string& delta_type) {
  if (delta_type == "long") return "BIGINT";
  if (delta_type == "integer") return "INT";
  if (delta_type == "short") return "SMALLINT";
  if (delta_type == "byte") return "TINYINT";
  std::string upper = delta_type;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

std::string ColumnSql(const arrow::Field& field) {
  std::string out = QuoteIdentifier(field.name()) + " " +
                    SqlTypeName(delta::DeltaTypeName(*field.type(), field.name()));
  if (!field.nullable()) out += " NOT NULL";
  if (auto comment = delta::FieldComment(field)) out += " COMMENT " + SqlStringLiteral(*comment);
  return out;
}

std::string PropertiesSql(const delta::StringMap& properties) {
  std::string out;
  for (const auto& [key, value] : properties) {
    if (!out.empty()) out += ", ";
    out += SqlStringLiteral(key) + " = " + SqlStringLiteral(value);
  }
  return out;
}

std::vector<std::string> FieldNames(const std::string& schema_json, const std::string& where) {
  auto parsed = nlohmann::json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("fields") ||
      !parsed["fields"].is_array()) {
    throw InternalError("the schema Spark gave for " + where + " is not StructType JSON");
  }
  std::vector<std::string> names;
  for (const auto& field : parsed["fields"]) names.push_back(field.value("name", ""));
  return names;
}

std::string TimestampLiteral(UtcMicros time) {
  return "CAST(" + SqlStringLiteral(FormatDateTime(time.value, 6)) + " AS TIMESTAMP_NTZ)";
}

}  // namespace

std::string ColumnDefinitionSql(const arrow::Field& field) { return ColumnSql(field); }

std::string CreateTableSql(const TableRef& name, const delta::CreateOptions& definition) {
  std::string columns;
  for (const auto& field : definition.schema->fields()) {
    if (!columns.empty()) columns += ", ";
    columns += ColumnSql(*field);
  }
  std::string sql = "CREATE TABLE IF NOT EXISTS " + name.QuotedName() + " (" + columns +
                    ") USING delta";
  if (definition.description) sql += " COMMENT " + SqlStringLiteral(*definition.description);
  // A name Spark stores only with column mapping turns it on, as it does for a table at a path.
  const auto properties =
      delta::WithColumnMappingMode(*definition.schema, definition.properties, name.text());
  if (!properties.empty()) sql += " TBLPROPERTIES (" + PropertiesSql(properties) + ")";
  return sql;
}

std::vector<std::string> MigrateTableSql(const TableRef& name, TableKind kind,
                                         const std::string& existing_schema_json,
                                         const delta::StringMap& existing_properties,
                                         const delta::CreateOptions& definition) {
  const std::string where = "table " + name.text();
  const std::string what = TableKindName(kind);
  CheckTableColumns(FieldNames(existing_schema_json, where), kind, where,
                    "name the " + what + " itself, or a table that does not exist yet");
  const auto existing = delta::FromDeltaSchemaString(existing_schema_json, where);
  delta::SchemaMergeRules rules;
  rules.table = name.text();
  rules.table_sql = name.QuotedName();
  // The table's own properties, as a write at a path reads them from its log.
  rules.type_widening_enabled = delta::TypeWideningEnabled(existing_properties);
  // The definition's data must go into the table as it is: a type it cannot be written into
  // fails here with the column, both types and the fix, before anything is written.
  delta::MergeSchemas(*existing, *definition.schema, rules);
  const bool mapped = delta::ColumnMappingModeOf(existing_properties, where) ==
                     delta::ColumnMappingMode::kName;
  std::vector<std::string> statements;
  std::string added;
  for (const auto& field : definition.schema->fields()) {
    bool present = false;
    for (const auto& have : existing->fields()) {
      if (EqualsIgnoringAsciiCase(have->name(), field->name())) present = true;
    }
    if (present) continue;
    if (!mapped && delta::NameNeedsColumnMapping(field->name())) {
      delta::ThrowNeedsColumnMapping(field->name(), where, name.QuotedName());
    }
    if (!added.empty()) added += ", ";
    added += ColumnSql(*field->WithNullable(true));
  }
  if (!added.empty()) {
    statements.push_back("ALTER TABLE " + name.QuotedName() + " ADD COLUMNS (" + added + ")");
  }
  auto have_version = existing_properties.find(kSchemaVersionProperty);
  const std::string existing_schema_version =
      have_version == existing_properties.end() ? "" : have_version->second;
  auto version = definition.properties.find(kSchemaVersionProperty);
  if (version != definition.properties.end() && version->second != existing_schema_version) {
    int have = 0;
    try {
      have = existing_schema_version.empty() ? 0 : std::stoi(existing_schema_version);
    } catch (const std::exception&) {
      have = 0;
    }
    // A table a newer release migrated keeps its version; its extra columns are left alone.
    if (have < std::stoi(version->second)) {
      statements.push_back("ALTER TABLE " + name.QuotedName() + " SET TBLPROPERTIES (" +
                           PropertiesSql({{version->first, version->second}}) + ")");
    }
  }
  return statements;
}

std::string AdvanceVerdictSql(const TableRef& control, const std::string& table_name,
                              const Offset& end, Granularity granularity) {
  if (!end.commit_ts) return "";
  const UtcMicros candidate = Truncate(*end.commit_ts, granularity);
  const std::string source =
      "SELECT " + SqlStringLiteral(table_name) + " AS table_name, " +
      TimestampLiteral(candidate) + " AS finalized_until, " +
      SqlStringLiteral(end.lsn.ToString()) + " AS end_lsn, " + TimestampLiteral(*end.commit_ts) +
      " AS end_commit_ts, " + TimestampLiteral(NowUtc()) + " AS updated_at";
  return "MERGE INTO " + control.QuotedName() + " AS t USING (" + source +
         ") AS s ON t.table_name = s.table_name"
         " WHEN MATCHED AND (t.finalized_until IS NULL OR t.finalized_until < s.finalized_until)"
         " THEN UPDATE SET t.finalized_until = s.finalized_until, t.end_lsn = s.end_lsn,"
         " t.end_commit_ts = s.end_commit_ts, t.updated_at = s.updated_at"
         " WHEN NOT MATCHED THEN INSERT (table_name, finalized_until, end_lsn, end_commit_ts,"
         " updated_at) VALUES (s.table_name, s.finalized_until, s.end_lsn, s.end_commit_ts,"
         " s.updated_at)";
}

}  // namespace mssql_cdc::catalog
