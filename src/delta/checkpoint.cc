#include "delta/checkpoint.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>

#include <chrono>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/arrow_status.h"
#include "core/errors.h"
#include "core/time.h"
#include "storage/file_system.h"
#include "delta/log_files.h"

namespace mssql_cdc::delta {
namespace {

using Json = nlohmann::json;

// The action columns, in the order Spark writes them. Every field is nullable: a row holds
// exactly one action, so the other columns of the row are null, and Spark writes its
// checkpoints with the same all-nullable schema.
std::shared_ptr<arrow::Schema> CheckpointSchema() {
  auto str = arrow::utf8();
  auto i64 = arrow::int64();
  auto i32 = arrow::int32();
  auto flag = arrow::boolean();
  auto string_map = arrow::map(arrow::utf8(), arrow::utf8());
  auto string_list = arrow::list(arrow::field("element", arrow::utf8()));
  return arrow::schema({
      arrow::field("txn", arrow::struct_({arrow::field("appId", str),
                                          arrow::field("version", i64),
                                          arrow::field("lastUpdated", i64)})),
      arrow::field("add", arrow::struct_({arrow::field("path", str),
                                          arrow::field("partitionValues", string_map),
                                          arrow::field("size", i64),
                                          arrow::field("modificationTime", i64),
                                          arrow::field("dataChange", flag),
                                          arrow::field("stats", str),
                                          arrow::field("tags", string_map)})),
      arrow::field("remove", arrow::struct_({arrow::field("path", str),
                                             arrow::field("deletionTimestamp", i64),
                                             arrow::field("dataChange", flag),
                                             arrow::field("extendedFileMetadata", flag),
                                             arrow::field("partitionValues", string_map),
                                             arrow::field("size", i64)})),
      arrow::field("metaData",
                   arrow::struct_({arrow::field("id", str),
                                   arrow::field("name", str),
                                   arrow::field("description", str),
                                   arrow::field("format",
                                                arrow::struct_({arrow::field("provider", str),
                                                                arrow::field("options",
                                                                             string_map)})),
                                   arrow::field("schemaString", str),
                                   arrow::field("partitionColumns", string_list),
                                   arrow::field("configuration", string_map),
                                   arrow::field("createdTime", i64)})),
      arrow::field("protocol", arrow::struct_({arrow::field("minReaderVersion", i32),
                                               arrow::field("minWriterVersion", i32),
                                               arrow::field("readerFeatures", string_list),
                                               arrow::field("writerFeatures", string_list)})),
  });
}

// Appends the JSON form of an action's body to the builder of its column; the JSON field
// names are the column's field names, so one walk serves every action.
arrow::Status AppendJson(arrow::ArrayBuilder* builder, const Json* value) {
  if (value == nullptr || value->is_null()) return builder->AppendNull();
  auto type_holder = builder->type();  // returned by value: keep it alive
  const auto& type = *type_holder;
  switch (type.id()) {
    case arrow::Type::STRUCT: {
      auto* b = static_cast<arrow::StructBuilder*>(builder);
      ARROW_RETURN_NOT_OK(b->Append());
      for (int i = 0; i < type.num_fields(); ++i) {
        auto it = value->find(type.field(i)->name());
        ARROW_RETURN_NOT_OK(AppendJson(b->field_builder(i), it == value->end() ? nullptr : &*it));
      }
      return arrow::Status::OK();
    }
    case arrow::Type::MAP: {
      auto* b = static_cast<arrow::MapBuilder*>(builder);
      ARROW_RETURN_NOT_OK(b->Append());
      for (const auto& [key, item] : value->items()) {
        ARROW_RETURN_NOT_OK(static_cast<arrow::StringBuilder*>(b->key_builder())->Append(key));
        ARROW_RETURN_NOT_OK(AppendJson(b->item_builder(), &item));
      }
      return arrow::Status::OK();
    }
    case arrow::Type::LIST: {
      auto* b = static_cast<arrow::ListBuilder*>(builder);
      ARROW_RETURN_NOT_OK(b->Append());
      for (const auto& item : *value) ARROW_RETURN_NOT_OK(AppendJson(b->value_builder(), &item));
      return arrow::Status::OK();
    }
    case arrow::Type::STRING:
      return static_cast<arrow::StringBuilder*>(builder)->Append(value->get<std::string>());
    case arrow::Type::INT64:
      return static_cast<arrow::Int64Builder*>(builder)->Append(value->get<std::int64_t>());
    case arrow::Type::INT32:
      return static_cast<arrow::Int32Builder*>(builder)->Append(value->get<std::int32_t>());
    case arrow::Type::BOOL:
      return static_cast<arrow::BooleanBuilder*>(builder)->Append(value->get<bool>());
    default:
      return arrow::Status::TypeError("checkpoint column of type ", type.ToString());
  }
}

// The JSON form of element `i` of a checkpoint column, the inverse of AppendJson; fields
// that are null, or of types no action field has, are left out.
Json JsonAt(const arrow::Array& array, std::int64_t i) {
  if (array.IsNull(i)) return nullptr;
  switch (array.type_id()) {
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      Json object = Json::object();
      for (int f = 0; f < s.num_fields(); ++f) {
        Json child = JsonAt(*s.field(f), i);
        if (!child.is_null()) object[s.type()->field(f)->name()] = std::move(child);
      }
      return object;
    }
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapArray&>(array);
      Json object = Json::object();
      for (auto j = m.value_offset(i); j < m.value_offset(i + 1); ++j) {
        Json key = JsonAt(*m.keys(), j);
        if (key.is_string()) object[key.get<std::string>()] = JsonAt(*m.items(), j);
      }
      return object;
    }
    case arrow::Type::LIST: {
      const auto& l = static_cast<const arrow::ListArray&>(array);
      Json list = Json::array();
      for (auto j = l.value_offset(i); j < l.value_offset(i + 1); ++j) {
        list.push_back(JsonAt(*l.values(), j));
      }
      return list;
    }
    case arrow::Type::LARGE_LIST: {
      const auto& l = static_cast<const arrow::LargeListArray&>(array);
      Json list = Json::array();
      for (auto j = l.value_offset(i); j < l.value_offset(i + 1); ++j) {
        list.push_back(JsonAt(*l.values(), j));
      }
      return list;
    }
    case arrow::Type::STRING:
      return static_cast<const arrow::StringArray&>(array).GetString(i);
    case arrow::Type::LARGE_STRING:
      return static_cast<const arrow::LargeStringArray&>(array).GetString(i);
    case arrow::Type::INT64: return static_cast<const arrow::Int64Array&>(array).Value(i);
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(array).Value(i);
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanArray&>(array).Value(i);
    default: return nullptr;
  }
}

}  // namespace

std::int64_t TombstoneRetentionMs(const StringMap& configuration) {
  constexpr std::int64_t kWeekMs = 7LL * 24 * 3600 * 1000;
  auto it = configuration.find("delta.deletedFileRetentionDuration");
  if (it == configuration.end()) return kWeekMs;
  static const std::regex pattern(R"(\s*(?:interval\s+)?(\d+)\s*([a-z]+?)s?\s*)",
                                  std::regex::icase);
  std::smatch match;
  if (!std::regex_match(it->second, match, pattern)) return kWeekMs;
  std::int64_t amount = std::stoll(match[1]);
  std::string unit = match[2];
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::int64_t> kUnitMs = {
      {"millisecond", 1}, {"second", 1000}, {"minute", 60'000},
      {"hour", 3'600'000}, {"day", 86'400'000}, {"week", 7 * 86'400'000LL}};
  auto unit_ms = kUnitMs.find(unit);
  return unit_ms == kUnitMs.end() ? kWeekMs : amount * unit_ms->second;
}

std::optional<LastCheckpoint> ReadLastCheckpoint(storage::FileSystem& fs, const std::string& table_root) {
  std::string path = LastCheckpointPath(table_root);
  auto contents = fs.ReadFile(path);
  if (!contents) return std::nullopt;
  Json json = Json::parse(*contents, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    throw SourceError(path + ": not valid JSON; delete it to replay the log without it");
  }
  auto integer = [&](const char* name, bool required) -> std::optional<std::int64_t> {
    auto it = json.find(name);
    if (it == json.end() || it->is_null()) {
      if (required) throw SourceError(path + ": required field " + std::string(name) + " is missing");
      return std::nullopt;
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
      throw SourceError(path + ": field " + std::string(name) + " is not a non-negative integer");
    }
    return it->get<std::int64_t>();
  };
  if (json.contains("parts") && !json["parts"].is_null()) {
    throw SourceError(path + " names a multi-part checkpoint, which mssql-cdc does not read");
  }
  LastCheckpoint last;
  last.version = *integer("version", true);
  last.size = *integer("size", true);
  last.size_in_bytes = integer("sizeInBytes", false);
  last.num_of_add_files = integer("numOfAddFiles", false);
  return last;
}

LastCheckpoint WriteCheckpoint(storage::FileSystem& fs, const std::string& table_root,
                               const TableState& snapshot) {
  std::vector<Action> actions;
  actions.push_back(snapshot.protocol);
  actions.push_back(snapshot.metadata);
  for (const auto& [app_id, version] : snapshot.app_versions) {
    actions.push_back(Txn{app_id, version, std::nullopt});
  }
  std::int64_t adds = 0;
  for (const auto& [path, add] : snapshot.files) {
    AddFile state = add;
    state.data_change = false;  // a checkpoint restates the table; it changes no data
    actions.push_back(std::move(state));
    ++adds;
  }
  std::int64_t expire_before = NowUnixMillis() - TombstoneRetentionMs(snapshot.metadata.configuration);
  for (const auto& [path, remove] : snapshot.tombstones) {
    if (remove.deletion_timestamp && *remove.deletion_timestamp < expire_before) continue;
    RemoveFile tombstone = remove;
    tombstone.data_change = false;
    actions.push_back(std::move(tombstone));
  }

  auto schema = CheckpointSchema();
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders;
  for (const auto& field : schema->fields()) {
    auto builder = arrow::MakeBuilder(field->type());
    ThrowIfError(builder.status(), "building a checkpoint");
    builders.push_back(std::move(*builder));
  }
  for (const auto& action : actions) {
    Json line = Json::parse(ToJsonLine(action));
    auto only = line.begin();  // an action line holds one key: the action's name
    const std::string name = only.key();
    const Json& body = only.value();
    for (int i = 0; i < schema->num_fields(); ++i) {
      bool mine = schema->field(i)->name() == name;
      ThrowIfError(AppendJson(builders[i].get(), mine ? &body : nullptr), "building a checkpoint");
    }
  }
  arrow::ArrayVector columns;
  for (auto& builder : builders) {
    auto array = builder->Finish();
    ThrowIfError(array.status(), "building a checkpoint");
    columns.push_back(*array);
  }
  auto table = arrow::Table::Make(schema, columns);

  std::string path = CheckpointPath(table_root, snapshot.version);
  auto sink = arrow::io::BufferOutputStream::Create();
  ThrowIfError(sink.status(), "writing " + path);
  auto properties =
      parquet::WriterProperties::Builder().compression(parquet::Compression::SNAPPY)->build();
  ThrowIfError(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *sink,
                                   std::max<std::int64_t>(1, table->num_rows()), properties),
        "writing " + path);
  auto buffer = (*sink)->Finish();
  ThrowIfError(buffer.status(), "writing " + path);
  fs.WriteAtomic(path, (*buffer)->ToString());

  LastCheckpoint last;
  last.version = snapshot.version;
  last.size = static_cast<std::int64_t>(actions.size());
  last.size_in_bytes = (*buffer)->size();
  last.num_of_add_files = adds;

  std::optional<LastCheckpoint> previous;
  try {
    previous = ReadLastCheckpoint(fs, table_root);
  } catch (const SourceError&) {
    // An unreadable pointer is replaced by a good one.
  }
  if (!previous || previous->version < last.version) {
    nlohmann::ordered_json pointer;
    pointer["version"] = last.version;
    pointer["size"] = last.size;
    pointer["sizeInBytes"] = *last.size_in_bytes;
    pointer["numOfAddFiles"] = *last.num_of_add_files;
    fs.WriteAtomic(LastCheckpointPath(table_root), pointer.dump());
  }
  return last;
}

std::vector<Action> ReadCheckpoint(storage::FileSystem& fs, const std::string& table_root,
                                   std::int64_t version, const LastCheckpoint* expected) {
  std::string path = CheckpointPath(table_root, version);
  if (!fs.Exists(path)) {
    throw SourceError(path + " is missing" +
                      (expected ? std::string(" but _delta_log/_last_checkpoint names it") : ""));
  }
  std::shared_ptr<arrow::Table> table;
  std::int64_t file_size = 0;
  try {
    auto input = fs.OpenInputFile(path);
    auto size = input->GetSize();
    ThrowIfError(size.status(), path);
    file_size = *size;
    auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool());
    ThrowIfError(reader.status(), path);
    ThrowIfError((*reader)->ReadTable(&table), path);
  } catch (const parquet::ParquetException& e) {
    throw SourceError(path + ": not a readable Parquet checkpoint (" + e.what() + ")");
  } catch (const SourceError& e) {
    throw SourceError(std::string(e.what()).rfind(path, 0) == 0
                          ? e.what()
                          : path + ": not a readable Parquet checkpoint (" + e.what() + ")");
  }
  auto batch = table->CombineChunksToBatch();
  ThrowIfError(batch.status(), path);
  const auto& rows = **batch;

  for (const char* v2 : {"checkpointMetadata", "sidecar"}) {
    auto column = rows.GetColumnByName(v2);
    if (column && column->null_count() < column->length()) {
      throw SourceError(path + " is a V2 checkpoint (" + std::string(v2) +
                        "), which mssql-cdc does not read");
    }
  }
  std::vector<std::pair<std::string, std::shared_ptr<arrow::Array>>> columns;
  for (const char* name : {"protocol", "metaData", "txn", "add", "remove"}) {
    if (auto column = rows.GetColumnByName(name)) columns.emplace_back(name, column);
  }
  std::vector<Action> actions;
  std::int64_t adds = 0;
  for (std::int64_t row = 0; row < rows.num_rows(); ++row) {
    for (const auto& [name, column] : columns) {
      if (column->IsNull(row)) continue;
      Json line = {{name, JsonAt(*column, row)}};
      auto action = ParseJsonLine(line.dump(), path + " row " + std::to_string(row));
      if (!action) continue;
      if (std::holds_alternative<AddFile>(*action)) ++adds;
      actions.push_back(std::move(*action));
    }
  }
  if (expected) {
    auto mismatch = [&](const std::string& field, std::int64_t named, std::int64_t found) {
      throw SourceError(path + " does not match _delta_log/_last_checkpoint: " + field + " is " +
                        std::to_string(named) + " there but " + std::to_string(found) +
                        " in the checkpoint");
    };
    if (expected->size != rows.num_rows()) mismatch("size", expected->size, rows.num_rows());
    if (expected->size_in_bytes && *expected->size_in_bytes != file_size) {
      mismatch("sizeInBytes", *expected->size_in_bytes, file_size);
    }
    if (expected->num_of_add_files && *expected->num_of_add_files != adds) {
      mismatch("numOfAddFiles", *expected->num_of_add_files, adds);
    }
  }
  return actions;
}

}  // namespace mssql_cdc::delta
