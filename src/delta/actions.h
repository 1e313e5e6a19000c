// Delta log actions: the records of a commit file (one JSON object per line) and the rows of
// a checkpoint. Each struct holds the fields this engine writes and reads; ToJson writes the
// action line as the Delta protocol names it ({"add": {...}}), FromJson reads one back and
// keeps unknown fields out of the way (a reader never fails on a field it does not know).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace mssql_cdc::delta {

using StringMap = std::map<std::string, std::string>;

struct Protocol {
  int min_reader_version = 1;
  int min_writer_version = 2;
  // Only present at reader version 3 / writer version 7 (table features).
  std::vector<std::string> reader_features;
  std::vector<std::string> writer_features;
  friend bool operator==(const Protocol&, const Protocol&) = default;
};

struct Metadata {
  std::string id;  // a UUID chosen at creation
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  std::string schema_string;  // the Delta schema JSON (schema.h)
  std::vector<std::string> partition_columns;
  StringMap configuration;  // table properties
  std::optional<std::int64_t> created_time;  // ms since epoch
  friend bool operator==(const Metadata&, const Metadata&) = default;
};

struct AddFile {
  std::string path;  // relative to the table root, URI-encoded
  StringMap partition_values;
  std::int64_t size = 0;
  std::int64_t modification_time = 0;  // ms since epoch
  bool data_change = true;
  std::optional<std::string> stats;  // JSON: numRecords, minValues, maxValues, nullCount
  std::optional<StringMap> tags;
};

struct RemoveFile {
  std::string path;
  std::optional<std::int64_t> deletion_timestamp;
  bool data_change = true;
  bool extended_file_metadata = true;
  StringMap partition_values;
  std::optional<std::int64_t> size;
};

// An application's progress marker: the table holds everything `app_id` wrote up to `version`.
struct Txn {
  std::string app_id;
  std::int64_t version = 0;
  std::optional<std::int64_t> last_updated;  // ms since epoch
};

struct CommitInfo {
  std::int64_t timestamp = 0;  // ms since epoch
  std::string operation;       // "WRITE", "CREATE TABLE", "MERGE", ...
  nlohmann::json operation_parameters = nlohmann::json::object();
  std::optional<std::int64_t> read_version;
  std::string isolation_level = "Serializable";
  bool is_blind_append = false;
  nlohmann::json operation_metrics = nlohmann::json::object();
  std::optional<std::string> user_metadata;  // caller-supplied JSON text
  std::string engine_info;
};

using Action = std::variant<Protocol, Metadata, AddFile, RemoveFile, Txn, CommitInfo>;

// One line of a commit file, without the newline.
std::string ToJsonLine(const Action& action);
// Parses one line; nullopt for an action this engine does not use (cdc, domainMetadata, ...).
// Throws DeltaError-class errors (ErrorCode kSource) naming `where` when the line is not JSON
// or a known action is malformed.
std::optional<Action> ParseJsonLine(std::string_view line, std::string_view where);

}  // namespace mssql_cdc::delta
