#include "delta/column_mapping.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <algorithm>

#include "core/ascii.h"
#include "core/errors.h"
#include "delta/data_file_io.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {
namespace {

// Arrow's key for a Parquet field id: the Parquet writer stores it in the file's schema.
constexpr char kParquetFieldId[] = "PARQUET:field_id";

std::string MetadataValue(const arrow::Field& field, const std::string& key) {
  if (!field.metadata()) return "";
  const int index = field.metadata()->FindKey(key);
  return index < 0 ? "" : field.metadata()->value(index);
}

// A non-negative integer from its text; -1 when the text is not one.
std::int64_t ParseId(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoll(text);
}

std::string NeedsMappingText(const std::string& column) {
  return "column '" + column + "' has a space or one of ,;{}()= in its name, which a Delta "
         "table stores only with column mapping";
}

}  // namespace

bool NameNeedsColumnMapping(std::string_view name) {
  return name.find_first_of(" ,;{}()\n\t=") != std::string_view::npos;
}

ColumnMappingMode ColumnMappingModeOf(const StringMap& configuration, const std::string& table) {
  auto it = configuration.find(kColumnMappingMode);
  if (it == configuration.end()) return ColumnMappingMode::kNone;
  const std::string& mode = it->second;
  if (EqualsIgnoringAsciiCase(mode, "none")) return ColumnMappingMode::kNone;
  if (EqualsIgnoringAsciiCase(mode, "name")) return ColumnMappingMode::kName;
  if (EqualsIgnoringAsciiCase(mode, "id")) {
    throw ConfigError(table + " has column mapping mode 'id', which mssql-cdc does not "
                      "implement; use a table with mode 'name' or none");
  }
  throw ConfigError(table + " has " + kColumnMappingMode + "='" + it->second +
                    "'; the modes are 'none', 'name' and 'id'");
}

std::string PhysicalName(const arrow::Field& field) {
  std::string physical = MetadataValue(field, kColumnMappingPhysicalName);
  return physical.empty() ? field.name() : physical;
}

std::shared_ptr<arrow::Schema> PhysicalSchema(const std::shared_ptr<arrow::Schema>& schema) {
  bool mapped = false;
  for (const auto& field : schema->fields()) {
    mapped = mapped || !MetadataValue(*field, kColumnMappingPhysicalName).empty();
  }
  if (!mapped) return schema;
  arrow::FieldVector fields;
  for (const auto& field : schema->fields()) {
    std::shared_ptr<arrow::KeyValueMetadata> metadata;
    const std::string id = MetadataValue(*field, kColumnMappingId);
    if (!id.empty()) metadata = arrow::key_value_metadata({kParquetFieldId}, {id});
    fields.push_back(arrow::field(PhysicalName(*field), field->type(), field->nullable(), metadata));
  }
  return arrow::schema(std::move(fields));
}

StringMap WithColumnMappingMode(const arrow::Schema& schema, StringMap properties,
                                const std::string& table) {
  const ColumnMappingMode mode = ColumnMappingModeOf(properties, table);
  for (const auto& field : schema.fields()) {
    if (!NameNeedsColumnMapping(field->name())) continue;
    if (properties.count(kColumnMappingMode) == 0) {
      properties[kColumnMappingMode] = "name";
      return properties;
    }
    if (mode == ColumnMappingMode::kNone) {
      throw ConfigError(NeedsMappingText(field->name()) + "; " + table + " is to be created with " +
                        kColumnMappingMode + "='none': leave the property out or set it to 'name'");
    }
  }
  return properties;
}

std::shared_ptr<arrow::Schema> MapNewColumns(const arrow::Schema& schema, StringMap& configuration,
                                             const std::string& table) {
  if (ColumnMappingModeOf(configuration, table) == ColumnMappingMode::kNone) {
    for (const auto& field : schema.fields()) {
      if (NameNeedsColumnMapping(field->name())) {
        ThrowNeedsColumnMapping(field->name(), table, PathTableSql(table));
      }
    }
    return std::make_shared<arrow::Schema>(schema.fields(), schema.metadata());
  }
  std::int64_t max_id = 0;
  if (auto it = configuration.find(kColumnMappingMaxId); it != configuration.end()) {
    max_id = std::max<std::int64_t>(0, ParseId(it->second));
  }
  for (const auto& field : schema.fields()) {
    max_id = std::max(max_id, ParseId(MetadataValue(*field, kColumnMappingId)));
  }
  arrow::FieldVector fields;
  for (const auto& field : schema.fields()) {
    if (ParseId(MetadataValue(*field, kColumnMappingId)) >= 0 &&
        !MetadataValue(*field, kColumnMappingPhysicalName).empty()) {
      fields.push_back(field);
      continue;
    }
    auto metadata = field->metadata() ? field->metadata()->Copy()
                                      : std::make_shared<arrow::KeyValueMetadata>();
    for (const char* key : {kColumnMappingId, kColumnMappingPhysicalName}) {
      if (int index = metadata->FindKey(key); index >= 0) (void)metadata->Delete(index);
    }
    metadata->Append(kColumnMappingId, std::to_string(++max_id));
    metadata->Append(kColumnMappingPhysicalName, "col-" + RandomUuid());
    fields.push_back(field->WithMetadata(metadata));
  }
  configuration[kColumnMappingMaxId] = std::to_string(max_id);
  return arrow::schema(std::move(fields), schema.metadata());
}

void ThrowNeedsColumnMapping(const std::string& column, const std::string& table,
                             const std::string& sql_name) {
  throw SchemaChangedError(NeedsMappingText(column) + ", and " + table +
                           " has none; enable it first with " + EnableColumnMappingSql(sql_name));
}

std::string EnableColumnMappingSql(const std::string& sql_name) {
  return "ALTER TABLE " + sql_name + " SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
         "'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')";
}

}  // namespace mssql_cdc::delta
