#include "delta/actions.h"

#include "core/errors.h"

namespace mssql_cdc::delta {
namespace {

// Ordered output keeps each action's fields in the protocol's order, which makes the log
// easy to read by eye; readers do not depend on it.
using OrderedJson = nlohmann::ordered_json;

OrderedJson MapToJson(const StringMap& map) {
  OrderedJson object = OrderedJson::object();
  for (const auto& [key, value] : map) object[key] = value;
  return object;
}

OrderedJson ToJson(const Protocol& p) {
  OrderedJson body;
  body["minReaderVersion"] = p.min_reader_version;
  body["minWriterVersion"] = p.min_writer_version;
  // The feature lists exist only at the versions that define them.
  if (p.min_reader_version >= 3) body["readerFeatures"] = p.reader_features;
  if (p.min_writer_version >= 7) body["writerFeatures"] = p.writer_features;
  return {{"protocol", body}};
}

OrderedJson ToJson(const Metadata& m) {
  OrderedJson body;
  body["id"] = m.id;
  if (m.name) body["name"] = *m.name;
  if (m.description) body["description"] = *m.description;
  body["format"] = {{"provider", m.format_provider}, {"options", OrderedJson::object()}};
  body["schemaString"] = m.schema_string;
  body["partitionColumns"] = m.partition_columns;
  body["configuration"] = MapToJson(m.configuration);
  if (m.created_time) body["createdTime"] = *m.created_time;
  return {{"metaData", body}};
}

OrderedJson ToJson(const AddFile& a) {
  OrderedJson body;
  body["path"] = a.path;
  body["partitionValues"] = MapToJson(a.partition_values);
  body["size"] = a.size;
  body["modificationTime"] = a.modification_time;
  body["dataChange"] = a.data_change;
  if (a.stats) body["stats"] = *a.stats;
  if (a.tags) body["tags"] = MapToJson(*a.tags);
  return {{"add", body}};
}

OrderedJson ToJson(const RemoveFile& r) {
  OrderedJson body;
  body["path"] = r.path;
  if (r.deletion_timestamp) body["deletionTimestamp"] = *r.deletion_timestamp;
  body["dataChange"] = r.data_change;
  body["extendedFileMetadata"] = r.extended_file_metadata;
  body["partitionValues"] = MapToJson(r.partition_values);
  if (r.size) body["size"] = *r.size;
  return {{"remove", body}};
}

OrderedJson ToJson(const Txn& t) {
  OrderedJson body;
  body["appId"] = t.app_id;
  body["version"] = t.version;
  if (t.last_updated) body["lastUpdated"] = *t.last_updated;
  return {{"txn", body}};
}

OrderedJson ToJson(const CommitInfo& c) {
  OrderedJson body;
  body["timestamp"] = c.timestamp;
  body["operation"] = c.operation;
  body["operationParameters"] = OrderedJson::parse(c.operation_parameters.dump());
  if (c.read_version) body["readVersion"] = *c.read_version;
  body["isolationLevel"] = c.isolation_level;
  body["isBlindAppend"] = c.is_blind_append;
  body["operationMetrics"] = OrderedJson::parse(c.operation_metrics.dump());
  if (c.user_metadata) body["userMetadata"] = *c.user_metadata;
  body["engineInfo"] = c.engine_info;
  return {{"commitInfo", body}};
}

// Field access that names the action, the field and the place on failure.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string_view action, std::string_view where)
      : object_(object), action_(action), where_(where) {
    if (!object_.is_object()) Fail("is not a JSON object");
  }

  std::string String(const char* name) const {
    const auto& v = Required(name);
    if (!v.is_string()) Fail(std::string("field ") + name + " is not a string");
    return v.get<std::string>();
  }
  std::optional<std::string> OptString(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) Fail(std::string("field ") + name + " is not a string");
    return it->get<std::string>();
  }
  std::int64_t Long(const char* name) const {
    const auto& v = Required(name);
    if (!v.is_number_integer()) Fail(std::string("field ") + name + " is not an integer");
    return v.get<std::int64_t>();
  }
  std::optional<std::int64_t> OptLong(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer()) Fail(std::string("field ") + name + " is not an integer");
    return it->get<std::int64_t>();
  }
  bool Bool(const char* name, std::optional<bool> fallback = std::nullopt) const {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) {
      if (fallback) return *fallback;
      Fail(std::string("required field ") + name + " is missing");
    }
    if (!it->is_boolean()) Fail(std::string("field ") + name + " is not a boolean");
    return it->get<bool>();
  }
  StringMap Map(const char* name, bool required) const {
    StringMap map;
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) {
      if (required) Fail(std::string("required field ") + name + " is missing");
      return map;
    }
    if (!it->is_object()) Fail(std::string("field ") + name + " is not an object");
    for (const auto& [key, value] : it->items()) {
      // Partition values of NULL are JSON null; they are kept as absent.
      if (value.is_null()) continue;
      if (!value.is_string()) Fail(std::string("field ") + name + "." + key + " is not a string");
      map[key] = value.get<std::string>();
    }
    return map;
  }
  std::vector<std::string> StringList(const char* name, bool required) const {
    std::vector<std::string> list;
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) {
      if (required) Fail(std::string("required field ") + name + " is missing");
      return list;
    }
    if (!it->is_array()) Fail(std::string("field ") + name + " is not an array");
    for (const auto& item : *it) {
      if (!item.is_string()) Fail(std::string("field ") + name + " holds a non-string");
      list.push_back(item.get<std::string>());
    }
    return list;
  }
  const nlohmann::json* Find(const char* name) const {
    auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  std::string_view where() const { return where_; }

  [[noreturn]] void Fail(const std::string& what) const {
    throw SourceError(std::string(where_) + ": " + std::string(action_) + " action " + what);
  }

 private:
  const nlohmann::json& Required(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) {
      Fail(std::string("required field ") + name + " is missing");
    }
    return *it;
  }

  const nlohmann::json& object_;
  std::string_view action_;
  std::string_view where_;
};

Protocol ParseProtocol(const Fields& f) {
  Protocol p;
  p.min_reader_version = static_cast<int>(f.Long("minReaderVersion"));
  p.min_writer_version = static_cast<int>(f.Long("minWriterVersion"));
  p.reader_features = f.StringList("readerFeatures", false);
  p.writer_features = f.StringList("writerFeatures", false);
  return p;
}

Metadata ParseMetadata(const Fields& f) {
  Metadata m;
  m.id = f.String("id");
  m.name = f.OptString("name");
  m.description = f.OptString("description");
  if (const auto* format = f.Find("format")) {
    Fields format_fields(*format, "metaData.format", f.where());
    m.format_provider = format_fields.String("provider");
  } else {
    f.Fail("required field format is missing");
  }
  m.schema_string = f.String("schemaString");
  m.partition_columns = f.StringList("partitionColumns", true);
  m.configuration = f.Map("configuration", false);
  m.created_time = f.OptLong("createdTime");
  return m;
}

AddFile ParseAdd(const Fields& f) {
  if (f.Find("deletionVector") != nullptr) {
    f.Fail("carries a deletion vector, which this engine does not read");
  }
  AddFile a;
  a.path = f.String("path");
  a.partition_values = f.Map("partitionValues", true);
  a.size = f.Long("size");
  a.modification_time = f.Long("modificationTime");
  a.data_change = f.Bool("dataChange");
  a.stats = f.OptString("stats");
  if (f.Find("tags") != nullptr) a.tags = f.Map("tags", false);
  return a;
}

RemoveFile ParseRemove(const Fields& f) {
  RemoveFile r;
  r.path = f.String("path");
  r.deletion_timestamp = f.OptLong("deletionTimestamp");
  r.data_change = f.Bool("dataChange", true);
  r.extended_file_metadata = f.Bool("extendedFileMetadata", false);
  r.partition_values = f.Map("partitionValues", false);
  r.size = f.OptLong("size");
  return r;
}

Txn ParseTxn(const Fields& f) {
  Txn t;
  t.app_id = f.String("appId");
  t.version = f.Long("version");
  t.last_updated = f.OptLong("lastUpdated");
  return t;
}

CommitInfo ParseCommitInfo(const nlohmann::json& body) {
  // commitInfo is free-form provenance: keep what is there, never fail on it.
  CommitInfo c;
  if (!body.is_object()) return c;
  auto get = [&](const char* name) -> const nlohmann::json* {
    auto it = body.find(name);
    return it == body.end() ? nullptr : &*it;
  };
  if (auto* v = get("timestamp"); v && v->is_number_integer()) c.timestamp = v->get<std::int64_t>();
  if (auto* v = get("operation"); v && v->is_string()) c.operation = v->get<std::string>();
  if (auto* v = get("operationParameters"); v && v->is_object()) c.operation_parameters = *v;
  if (auto* v = get("readVersion"); v && v->is_number_integer()) {
    c.read_version = v->get<std::int64_t>();
  }
  if (auto* v = get("isolationLevel"); v && v->is_string()) {
    c.isolation_level = v->get<std::string>();
  }
  if (auto* v = get("isBlindAppend"); v && v->is_boolean()) c.is_blind_append = v->get<bool>();
  if (auto* v = get("operationMetrics"); v && v->is_object()) c.operation_metrics = *v;
  if (auto* v = get("userMetadata"); v && v->is_string()) c.user_metadata = v->get<std::string>();
  if (auto* v = get("engineInfo"); v && v->is_string()) c.engine_info = v->get<std::string>();
  return c;
}

}  // namespace

std::string ToJsonLine(const Action& action) {
  return std::visit([](const auto& a) { return ToJson(a).dump(); }, action);
}

std::optional<Action> ParseJsonLine(std::string_view line, std::string_view where) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw SourceError(std::string(where) + ": not valid JSON (" + e.what() + ")");
  }
  if (!object.is_object() || object.size() != 1) {
    throw SourceError(std::string(where) + ": a log line must be a JSON object with one action");
  }
  auto only = object.begin();
  const std::string name = only.key();
  const nlohmann::json& body = only.value();
  if (name == "protocol") return ParseProtocol(Fields(body, name, where));
  if (name == "metaData") return ParseMetadata(Fields(body, name, where));
  if (name == "add") return ParseAdd(Fields(body, name, where));
  if (name == "remove") return ParseRemove(Fields(body, name, where));
  if (name == "txn") return ParseTxn(Fields(body, name, where));
  if (name == "commitInfo") return ParseCommitInfo(body);
  return std::nullopt;  // cdc, domainMetadata, ...: not needed to replay files and schema
}

}  // namespace mssql_cdc::delta
