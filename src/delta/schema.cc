#include "delta/schema.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <unordered_map>

#include "core/ascii.h"
#include "core/errors.h"
#include "delta/compute_kernels.h"

namespace mssql_cdc::delta {
namespace {

using OrderedJson = nlohmann::ordered_json;

struct Decimal {
  int precision = 0;
  int scale = 0;
};

std::optional<Decimal> ParseDecimal(const std::string& name) {
  static const std::regex pattern(R"(decimal\(\s*(\d+)\s*,\s*(\d+)\s*\))");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return Decimal{std::stoi(match[1]), std::stoi(match[2])};
}

// The rank of the integer types in the widening ladder byte -> short -> integer -> long.
int IntegerRank(const std::string& name) {
  if (name == "byte") return 1;
  if (name == "short") return 2;
  if (name == "integer") return 3;
  if (name == "long") return 4;
  return 0;
}

// Column metadata values are JSON; Arrow keeps strings. Delta's own keys may hold lists,
// numbers or booleans, which travel as their JSON text and are restored on the way back.
OrderedJson MetadataToJson(const arrow::KeyValueMetadata* metadata) {
  OrderedJson object = OrderedJson::object();
  if (metadata == nullptr) return object;
  for (int64_t i = 0; i < metadata->size(); ++i) {
    const std::string& key = metadata->key(i);
    const std::string& value = metadata->value(i);
    if (key.rfind("delta.", 0) == 0) {
      auto parsed = OrderedJson::parse(value, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded() && !parsed.is_string()) {
        object[key] = parsed;
        continue;
      }
    }
    object[key] = value;
  }
  return object;
}

std::shared_ptr<arrow::KeyValueMetadata> MetadataFromJson(const nlohmann::json& object) {
  if (!object.is_object() || object.empty()) return nullptr;
  auto metadata = std::make_shared<arrow::KeyValueMetadata>();
  for (const auto& [key, value] : object.items()) {
    metadata->Append(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return metadata;
}

[[noreturn]] void BadSchema(std::string_view where, const std::string& what) {
  throw SourceError(std::string(where) + ": schemaString " + what);
}

std::string TypeChangeText(const std::string& column, const std::string& from,
                           const std::string& to, const std::string& table) {
  return "column '" + column + "' of " + table + " has type " + from +
         " but the incoming data has type " + to;
}

// A field of `field` with its type changed and the change recorded as the protocol asks: a
// {"fromType","toType"} entry appended to the column's delta.typeChanges list.
std::shared_ptr<arrow::Field> WidenedField(const arrow::Field& field,
                                           const std::shared_ptr<arrow::DataType>& type,
                                           const std::string& from, const std::string& to) {
  auto metadata = field.metadata() ? field.metadata()->Copy()
                                   : std::make_shared<arrow::KeyValueMetadata>();
  nlohmann::ordered_json changes = nlohmann::ordered_json::array();
  int index = metadata->FindKey("delta.typeChanges");
  if (index >= 0) {
    auto parsed = nlohmann::ordered_json::parse(metadata->value(index), nullptr, false);
    if (parsed.is_array()) changes = parsed;
  }
  changes.push_back({{"fromType", from}, {"toType", to}});
  if (index >= 0) {
    (void)metadata->Delete(index);
  }
  metadata->Append("delta.typeChanges", changes.dump());
  return arrow::field(field.name(), type, field.nullable(), metadata);
}

}  // namespace

std::string DeltaTypeName(const arrow::DataType& type, const std::string& column) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: return "string";
    case arrow::Type::INT64: return "long";
    case arrow::Type::INT32: return "integer";
    case arrow::Type::INT16: return "short";
    case arrow::Type::INT8: return "byte";
    case arrow::Type::FLOAT: return "float";
    case arrow::Type::DOUBLE: return "double";
    case arrow::Type::BOOL: return "boolean";
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::BINARY_VIEW: return "binary";
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: return "date";
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      // Any zone denotes instants (Delta stores them in UTC); none denotes wall-clock time.
      return ts.timezone().empty() ? "timestamp_ntz" : "timestamp";
    }
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(type);
      if (d.precision() > 38) break;
      return "decimal(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    default: break;
  }
  throw UnsupportedTypeError("column '" + column + "' has Arrow type " + type.ToString() +
                             ", which a Delta table written by mssql-cdc cannot hold");
}

std::shared_ptr<arrow::DataType> ArrowTypeOf(const std::string& name, std::string_view where) {
  static const std::unordered_map<std::string, std::shared_ptr<arrow::DataType>> kTypes = {
      {"string", arrow::utf8()},
      {"long", arrow::int64()},
      {"integer", arrow::int32()},
      {"short", arrow::int16()},
      {"byte", arrow::int8()},
      {"float", arrow::float32()},
      {"double", arrow::float64()},
      {"boolean", arrow::boolean()},
      {"binary", arrow::binary()},
      {"date", arrow::date32()},
      {"timestamp", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")},
      {"timestamp_ntz", arrow::timestamp(arrow::TimeUnit::MICRO)},
  };
  if (auto it = kTypes.find(name); it != kTypes.end()) return it->second;
  // Spark 4 spells the default collation out where a schema came through Spark Connect; it
  // compares and stores strings as plain `string` does. Other collations compare otherwise, and
  // are refused below.
  if (name == "string collate UTF8_BINARY") return arrow::utf8();
  if (auto decimal = ParseDecimal(name)) {
    if (decimal->precision < 1 || decimal->precision > 38 || decimal->scale > decimal->precision) {
      BadSchema(where, "has an invalid type " + name);
    }
    return arrow::decimal128(decimal->precision, decimal->scale);
  }
  BadSchema(where, "has type " + name + ", which mssql-cdc does not read yet");
}

std::shared_ptr<arrow::Field> CommentedField(std::string name, std::shared_ptr<arrow::DataType> type,
                                             const std::string& comment) {
  return arrow::field(std::move(name), std::move(type), /*nullable=*/true,
                      arrow::key_value_metadata({"comment"}, {comment}));
}

std::optional<std::string> FieldComment(const arrow::Field& field) {
  if (!field.metadata()) return std::nullopt;
  auto comment = field.metadata()->Get("comment");
  return comment.ok() ? std::optional<std::string>(*comment) : std::nullopt;
}

std::string ToDeltaSchemaString(const arrow::Schema& schema) {
  OrderedJson fields = OrderedJson::array();
  for (const auto& field : schema.fields()) {
    OrderedJson f;
    f["name"] = field->name();
    f["type"] = DeltaTypeName(*field->type(), field->name());
    f["nullable"] = field->nullable();
    f["metadata"] = MetadataToJson(field->metadata().get());
    fields.push_back(std::move(f));
  }
  OrderedJson root;
  root["type"] = "struct";
  root["fields"] = std::move(fields);
  return root.dump();
}

std::shared_ptr<arrow::Schema> FromDeltaSchemaString(const std::string& json,
                                                     std::string_view where) {
  nlohmann::json root = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) BadSchema(where, "is not valid JSON");
  if (!root.is_object() || root.value("type", "") != "struct" || !root.contains("fields") ||
      !root["fields"].is_array()) {
    BadSchema(where, "is not a struct with fields");
  }
  arrow::FieldVector fields;
  for (const auto& f : root["fields"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type")) {
      BadSchema(where, "has a field without a name or type");
    }
    std::string name = f["name"].get<std::string>();
    if (!f["type"].is_string()) {
      BadSchema(where, "has nested column '" + name + "', which mssql-cdc does not read yet");
    }
    bool nullable = f.value("nullable", true);
    auto metadata = MetadataFromJson(f.contains("metadata") ? f["metadata"] : nlohmann::json());
    fields.push_back(arrow::field(name, ArrowTypeOf(f["type"].get<std::string>(), where),
                                  nullable, metadata));
  }
  return arrow::schema(std::move(fields));
}

bool TypeWideningEnabled(const std::map<std::string, std::string>& properties) {
  auto it = properties.find("delta.enableTypeWidening");
  return it != properties.end() && AsciiLower(it->second) == "true";
}

bool IsTypeWidening(const std::string& from, const std::string& to) {
  if (from == to) return false;
  int from_rank = IntegerRank(from);
  int to_rank = IntegerRank(to);
  if (from_rank > 0 && to_rank > 0) return to_rank > from_rank;
  if (from == "float" && to == "double") return true;
  if (from_rank >= 1 && from_rank <= 3 && to == "double") return true;
  if (from == "date" && to == "timestamp_ntz") return true;
  auto to_decimal = ParseDecimal(to);
  if (!to_decimal) return false;
  // decimal(p,s) -> decimal(p+k1, s+k2) with k1 >= k2 >= 0; integers widen as if they were
  // decimal(10,0) (byte, short, integer) or decimal(20,0) (long).
  std::optional<Decimal> from_decimal = ParseDecimal(from);
  if (from_rank >= 1 && from_rank <= 3) from_decimal = Decimal{10, 0};
  if (from_rank == 4) from_decimal = Decimal{20, 0};
  if (!from_decimal) return false;
  int k1 = to_decimal->precision - from_decimal->precision;
  int k2 = to_decimal->scale - from_decimal->scale;
  return k2 >= 0 && k1 >= k2 && !(k1 == 0 && k2 == 0 && from_rank == 0);
}

std::string PathTableSql(const std::string& path) {
  std::string quoted;
  for (char c : path) quoted += c == '`' ? std::string("``") : std::string(1, c);
  return "delta.`" + quoted + "`";
}

std::string ColumnList(const arrow::Schema& schema) {
  std::string out;
  for (const auto& field : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += field->name() + " " + field->type()->ToString();
  }
  return out;
}

bool SameColumns(const arrow::Schema& a, const arrow::Schema& b) {
  if (a.num_fields() != b.num_fields()) return false;
  for (int i = 0; i < a.num_fields(); ++i) {
    const auto& x = *a.field(i);
    const auto& y = *b.field(i);
    if (x.name() != y.name() || x.nullable() != y.nullable() ||
        DeltaTypeName(*x.type(), x.name()) != DeltaTypeName(*y.type(), y.name())) {
      return false;
    }
  }
  return true;
}

SchemaMergeResult MergeSchemas(const arrow::Schema& table, const arrow::Schema& incoming,
                               const SchemaMergeRules& rules) {
  std::unordered_map<std::string, int> table_index;
  for (int i = 0; i < table.num_fields(); ++i) table_index[AsciiLower(table.field(i)->name())] = i;

  SchemaMergeResult result;
  arrow::FieldVector fields = table.fields();
  std::unordered_map<std::string, std::string> seen;  // lower-case name -> incoming spelling
  for (const auto& in : incoming.fields()) {
    std::string key = AsciiLower(in->name());
    if (auto [it, fresh] = seen.emplace(key, in->name()); !fresh) {
      throw ConfigError("the incoming data has columns '" + it->second + "' and '" + in->name() +
                        "', which Delta treats as the same name");
    }
    std::string in_type = DeltaTypeName(*in->type(), in->name());
    auto found = table_index.find(key);
    if (found == table_index.end()) {
      if (!rules.add_columns) {
        throw SchemaChangedError("the incoming data has column '" + in->name() + "' (" + in_type +
                                 ") that " + rules.table +
                                 " lacks, and schema merging is turned off");
      }
      // Files written before hold no value for the column: it must be nullable.
      fields.push_back(arrow::field(in->name(), ArrowTypeOf(in_type, "incoming data"), true,
                                    in->metadata()));
      result.changed = true;
      continue;
    }
    const auto& current = fields[found->second];
    std::string table_type = DeltaTypeName(*current->type(), current->name());
    if (in_type == table_type || IsTypeWidening(in_type, table_type)) continue;  // data is cast
    if (!IsTypeWidening(table_type, in_type)) {
      throw SchemaChangedError(TypeChangeText(current->name(), table_type, in_type, rules.table) +
                               ", a change Delta tables cannot take; rewrite the table with the "
                               "new type or cast the data to " + table_type);
    }
    if (!rules.type_widening_enabled) {
      throw SchemaChangedError(
          TypeChangeText(current->name(), table_type, in_type, rules.table) +
          "; widening it needs type widening on the table: run ALTER TABLE " +
          (rules.table_sql.empty() ? PathTableSql(rules.table) : rules.table_sql) +
          " SET TBLPROPERTIES ('delta.enableTypeWidening'='true')");
    }
    fields[found->second] =
        WidenedField(*current, ArrowTypeOf(in_type, "incoming data"), table_type, in_type);
    result.changed = true;
    result.widened = true;
  }
  result.schema = arrow::schema(std::move(fields), table.metadata());
  return result;
}

std::shared_ptr<arrow::RecordBatch> AlignBatchToSchema(const arrow::RecordBatch& batch,
                                                       const std::shared_ptr<arrow::Schema>& schema,
                                                       const std::string& table) {
  std::unordered_map<std::string, int> by_name;
  for (int i = 0; i < batch.num_columns(); ++i) {
    by_name[AsciiLower(batch.schema()->field(i)->name())] = i;
  }
  arrow::ArrayVector columns;
  for (const auto& field : schema->fields()) {
    std::shared_ptr<arrow::Array> column;
    auto found = by_name.find(AsciiLower(field->name()));
    if (found == by_name.end()) {
      auto nulls = arrow::MakeArrayOfNull(field->type(), batch.num_rows());
      if (!nulls.ok()) {
        throw InternalError("making NULL column " + field->name() + ": " + nulls.status().ToString());
      }
      column = *nulls;
    } else {
      column = batch.column(found->second);
      if (!column->type()->Equals(*field->type())) {
        EnsureComputeKernels();
        auto options = arrow::compute::CastOptions::Safe(field->type());
        options.allow_time_truncate = true;  // Delta keeps microseconds
        auto cast = arrow::compute::Cast(*column, field->type(), options);
        if (!cast.ok()) {
          throw SchemaChangedError("column '" + field->name() + "' of the incoming data (" +
                                   column->type()->ToString() + ") cannot be cast to " +
                                   field->type()->ToString() + " for " + table + ": " +
                                   cast.status().message());
        }
        column = *cast;
      }
    }
    if (!field->nullable() && column->null_count() > 0) {
      throw ConfigError("column '" + field->name() + "' of " + table +
                        " is NOT NULL, but the incoming data has " +
                        std::to_string(column->null_count()) + " NULL values" +
                        (found == by_name.end() ? " (the column is missing)" : ""));
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(schema, batch.num_rows(), std::move(columns));
}

}  // namespace mssql_cdc::delta
