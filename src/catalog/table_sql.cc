#include "catalog/table_sql.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <algorithm>
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

bool IsTimestampNtz(const arrow::Field& field) {
  return field.type()->id() == arrow::Type::TIMESTAMP &&
         static_cast<const arrow::TimestampType&>(*field.type()).timezone().empty();
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
  std::string sql = "CREATE TABLE IF NOT EXISTS " + name.SqlName() + " (" + columns +
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
  const auto columns = FieldNames(existing_schema_json, where);
  CheckTableColumns(columns, kind, where, "name the " + what + " itself, or a table that does not exist yet");
  if (IsReferencePlansTable(kind, columns)) return {};
  CheckSchemaVersion(existing_properties, SchemaVersionOf(kind), what, where);
  const auto existing = delta::FromDeltaSchemaString(existing_schema_json, where);
  delta::SchemaMergeRules rules;
  rules.table = name.text();
  rules.table_sql = name.SqlName();
  // The table's own properties, as a write at a path reads them from its log.
  rules.type_widening_enabled = delta::TypeWideningEnabled(existing_properties);
  // The definition's data must go into the table as it is: a type it cannot be written into
  // fails here with the column, both types and the fix, before anything is written.
  delta::MergeSchemas(*existing, *definition.schema, rules);
  const bool mapped = delta::ColumnMappingModeOf(existing_properties, where) ==
                     delta::ColumnMappingMode::kName;
  std::vector<std::string> statements;
  std::string added;
  bool adds_ntz = false;
  for (const auto& field : definition.schema->fields()) {
    bool present = false;
    for (const auto& have : existing->fields()) {
      if (EqualsIgnoringAsciiCase(have->name(), field->name())) present = true;
    }
    if (present) continue;
    if (!mapped && delta::NameNeedsColumnMapping(field->name())) {
      delta::ThrowNeedsColumnMapping(field->name(), where, name.SqlName());
    }
    if (!added.empty()) added += ", ";
    added += ColumnSql(*field->WithNullable(true));
    adds_ntz = adds_ntz || IsTimestampNtz(*field);
  }
  if (!added.empty()) {
    // Delta takes a TIMESTAMP_NTZ column only into a table with the timestampNtz feature, which
    // a table gets with its first such column: an older table without one enables it first.
    const auto& have = existing->fields();
    if (adds_ntz && std::none_of(have.begin(), have.end(), [](const auto& f) { return IsTimestampNtz(*f); })) {
      statements.push_back("ALTER TABLE " + name.SqlName() + " SET TBLPROPERTIES (" +
                           PropertiesSql({{"delta.feature.timestampNtz", "supported"}}) + ")");
    }
    statements.push_back("ALTER TABLE " + name.SqlName() + " ADD COLUMNS (" + added + ")");
  }
  auto have_version = existing_properties.find(kSchemaVersionProperty);
  const int have = have_version == existing_properties.end() ? 0 : std::stoi(have_version->second);
  if (have < SchemaVersionOf(kind)) {
    statements.push_back("ALTER TABLE " + name.SqlName() + " SET TBLPROPERTIES (" +
                         PropertiesSql({{kSchemaVersionProperty, std::to_string(SchemaVersionOf(kind))}}) +
                         ")");
  }
  return statements;
}

namespace {

// `column` as CREATE TABLE and ADD COLUMNS take it, its type checked to be type text only: the
// statement is built from it, so nothing else may ride along.
std::string UserColumnSql(const ColumnDef& column, const TableRef& table) {
  const bool type_text =
      !column.type.empty() && std::all_of(column.type.begin(), column.type.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '(' ||
               c == ')' || c == ',' || c == '<' || c == '>' || c == ':';
      });
  if (!type_text) {
    throw ConfigError("column " + QuoteUserText(column.name) + " of " + table.text() + " has type " +
                      QuoteUserText(column.type) +
                      ", which is not a Spark SQL type; give one such as 'BIGINT', "
                      "'decimal(18,2)' or 'array<string>', or a pyspark DataType");
  }
  std::string out = QuoteIdentifier(column.name) + " " + column.type;
  if (column.comment) out += " COMMENT " + SqlStringLiteral(*column.comment);
  return out;
}

}  // namespace

std::string CreateTableSql(const TableRef& table, const std::vector<ColumnDef>& columns,
                           const std::optional<std::string>& comment,
                           const delta::StringMap& properties) {
  if (columns.empty()) throw ConfigError("a table needs columns: " + table.text() + " was given none");
  std::string sql = "CREATE TABLE IF NOT EXISTS " + table.SqlName() + " (";
  delta::StringMap all = properties;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    sql += (i > 0 ? ", " : "") + UserColumnSql(columns[i], table);
    if (delta::NameNeedsColumnMapping(columns[i].name)) {
      all.emplace(delta::kColumnMappingMode, "name");
    }
  }
  sql += ") USING delta";
  if (comment) sql += " COMMENT " + SqlStringLiteral(*comment);
  if (!all.empty()) sql += " TBLPROPERTIES (" + PropertiesSql(all) + ")";
  return sql;
}

std::string AddColumnsSql(const TableRef& table, const std::vector<std::string>& existing,
                          const std::vector<ColumnDef>& columns) {
  std::string added;
  std::vector<std::string> have = existing;
  for (const auto& column : columns) {
    const bool present = std::any_of(have.begin(), have.end(), [&](const std::string& name) {
      return EqualsIgnoringAsciiCase(name, column.name);
    });
    if (present) continue;
    added += (added.empty() ? "" : ", ") + UserColumnSql(column, table);
    have.push_back(column.name);
  }
  if (added.empty()) return "";
  return "ALTER TABLE " + table.SqlName() + " ADD COLUMNS (" + added + ")";
}

std::vector<std::string> SetCommentsSql(
    const TableRef& table, const std::vector<std::pair<std::string, std::string>>& columns,
    const std::optional<std::string>& table_comment) {
  std::vector<std::string> statements;
  for (const auto& [name, comment] : columns) {
    statements.push_back("ALTER TABLE " + table.SqlName() + " ALTER COLUMN " + QuoteIdentifier(name) +
                         " COMMENT " + SqlStringLiteral(comment));
  }
  if (table_comment) {
    statements.push_back("ALTER TABLE " + table.SqlName() + " SET TBLPROPERTIES (" +
                         PropertiesSql({{"comment", *table_comment}}) + ")");
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
