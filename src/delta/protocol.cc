#include "delta/protocol.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <algorithm>
#include <set>

#include "core/errors.h"
#include "delta/column_mapping.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {
namespace {

constexpr int kFeaturesReaderVersion = 3;
constexpr int kFeaturesWriterVersion = 7;

// Reader features whose data this engine reads correctly.
const std::set<std::string> kReadableFeatures = {"columnMapping", "timestampNtz", "typeWidening",
                                                 "vacuumProtocolCheck"};
// Writer features whose rules this engine follows when it commits. vacuumProtocolCheck only
// constrains VACUUM, which this engine does not run.
const std::set<std::string> kWritableFeatures = {"appendOnly", "columnMapping", "invariants",
                                                 "timestampNtz", "typeWidening",
                                                 "vacuumProtocolCheck"};
// Writer features that a legacy writer version implies and that bind a writer only when the
// table uses them (checkConstraints, changeDataFeed, generatedColumns): a table upgraded from
// writer version 5 lists them whether or not it uses them.
const std::set<std::string> kWritableUnlessUsed = {"checkConstraints", "changeDataFeed",
                                                   "generatedColumns"};

// The features a legacy writer version implies, listed when such a table moves to table
// features so that the upgrade drops none of them.
std::vector<std::string> LegacyWriterFeatures(int writer_version) {
  std::vector<std::string> features;
  if (writer_version >= 2) features.insert(features.end(), {"appendOnly", "invariants"});
  if (writer_version >= 3) features.push_back("checkConstraints");
  if (writer_version >= 4) features.insert(features.end(), {"changeDataFeed", "generatedColumns"});
  if (writer_version >= 5) features.push_back("columnMapping");
  if (writer_version >= 6) features.push_back("identityColumns");
  return features;
}

void AddFeature(std::vector<std::string>& list, const std::string& feature) {
  if (std::find(list.begin(), list.end(), feature) == list.end()) list.push_back(feature);
}

bool HasFeature(const std::vector<std::string>& list, const std::string& feature) {
  return std::find(list.begin(), list.end(), feature) != list.end();
}

bool IsTrue(const StringMap& map, const std::string& key) {
  auto it = map.find(key);
  if (it == map.end()) return false;
  std::string value = it->second;
  std::transform(value.begin(), value.end(), value.begin(), ::tolower);
  return value == "true";
}

// Whether the table uses a feature of kWritableUnlessUsed: a constraint, the change data feed or
// a generated column.
bool UsesFeature(const std::string& feature, const Metadata& metadata) {
  if (feature == "changeDataFeed") return IsTrue(metadata.configuration, "delta.enableChangeDataFeed");
  if (feature == "checkConstraints") {
    return std::any_of(metadata.configuration.begin(), metadata.configuration.end(),
                       [](const auto& entry) { return entry.first.rfind("delta.constraints.", 0) == 0; });
  }
  return metadata.schema_string.find("delta.generationExpression") != std::string::npos;
}

}  // namespace

Protocol RequiredProtocol(const std::optional<Protocol>& existing, const arrow::Schema& schema,
                          const StringMap& configuration) {
  const Protocol current = existing.value_or(Protocol{});
  std::vector<std::string> needed;
  for (const auto& field : schema.fields()) {
    if (DeltaTypeName(*field->type(), field->name()) == "timestamp_ntz") {
      AddFeature(needed, "timestampNtz");
    }
    if (field->metadata() && field->metadata()->Contains("delta.typeChanges")) {
      AddFeature(needed, "typeWidening");
    }
  }
  if (IsTrue(configuration, "delta.enableTypeWidening")) AddFeature(needed, "typeWidening");
  // The mode was checked where the table's properties came in (CheckTableProperties, CheckCanWrite).
  const bool column_mapping =
      ColumnMappingModeOf(configuration, "the table") == ColumnMappingMode::kName;

  Protocol result = current;
  result.min_reader_version = std::max(result.min_reader_version, 1);
  result.min_writer_version = std::max(result.min_writer_version, 2);
  bool has_all = std::all_of(needed.begin(), needed.end(), [&](const std::string& f) {
    return HasFeature(current.reader_features, f) && HasFeature(current.writer_features, f);
  });
  if (column_mapping && needed.empty() && current.min_writer_version < kFeaturesWriterVersion) {
    // Readers and writer versions 2 and 5 imply column mapping: what Spark gives a table that
    // needs nothing else, and what the ALTER TABLE that enables mapping asks for.
    result.min_reader_version = std::max(result.min_reader_version, 2);
    result.min_writer_version = std::max(result.min_writer_version, 5);
    return result;
  }
  if (column_mapping) AddFeature(needed, "columnMapping");
  has_all = has_all && (!column_mapping || (HasFeature(current.reader_features, "columnMapping") &&
                                            HasFeature(current.writer_features, "columnMapping")));
  if (needed.empty() || has_all) return result;

  if (result.min_writer_version < kFeaturesWriterVersion) {
    // A table below writer version 7 already promises what its version implies (version 2:
    // appendOnly and invariants); moving to table features must keep listing them, new table
    // or not, or Spark refuses a table with a NOT NULL column.
    result.writer_features = LegacyWriterFeatures(result.min_writer_version);
  }
  if (result.min_reader_version < kFeaturesReaderVersion) {
    result.reader_features.clear();
    if (existing && result.min_reader_version >= 2) {
      result.reader_features.push_back("columnMapping");
    }
  }
  result.min_reader_version = kFeaturesReaderVersion;
  result.min_writer_version = kFeaturesWriterVersion;
  for (const auto& feature : needed) {
    AddFeature(result.reader_features, feature);
    AddFeature(result.writer_features, feature);
  }
  return result;
}

void CheckCanRead(const Protocol& protocol, const Metadata& metadata, const std::string& table) {
  if (protocol.min_reader_version > kFeaturesReaderVersion) {
    throw SourceError(table + " needs Delta reader version " +
                      std::to_string(protocol.min_reader_version) +
                      "; mssql-cdc reads up to version 3");
  }
  if (protocol.min_reader_version == kFeaturesReaderVersion) {
    for (const auto& feature : protocol.reader_features) {
      if (!kReadableFeatures.count(feature)) {
        throw SourceError(table + " needs the Delta reader feature '" + feature +
                          "', which mssql-cdc does not implement");
      }
    }
  }
  try {
    ColumnMappingModeOf(metadata.configuration, table);
  } catch (const ConfigError& e) {
    throw SourceError(e.what());
  }
}

void CheckCanWrite(const Protocol& protocol, const Metadata& metadata, const std::string& table) {
  if (protocol.min_writer_version > kFeaturesWriterVersion ||
      (protocol.min_writer_version > 2 && protocol.min_writer_version < kFeaturesWriterVersion &&
       protocol.min_writer_version != 5)) {
    throw ConfigError(table + " needs Delta writer version " +
                      std::to_string(protocol.min_writer_version) +
                      " (constraints, change data feed, generated or identity columns), which "
                      "mssql-cdc does not write");
  }
  std::vector<std::string> features = protocol.writer_features;
  if (protocol.min_writer_version < kFeaturesWriterVersion) {
    features = LegacyWriterFeatures(protocol.min_writer_version);
  }
  for (const auto& feature : features) {
    if (kWritableFeatures.count(feature)) continue;
    if (kWritableUnlessUsed.count(feature) && !UsesFeature(feature, metadata)) continue;
    throw ConfigError(table + " needs the Delta writer feature '" + feature +
                      "', which mssql-cdc does not implement");
  }
  ColumnMappingModeOf(metadata.configuration, table);
}

void CheckTableProperties(const StringMap& properties) {
  // Properties this engine honours, and properties it accepts only at their default value.
  static const std::set<std::string> kHonoured = {
      "delta.enableTypeWidening", "delta.appendOnly", "delta.checkpointInterval",
      "delta.logRetentionDuration", "delta.deletedFileRetentionDuration",
      kColumnMappingMode, kColumnMappingMaxId};
  static const std::map<std::string, std::string> kOnlyDefault = {
      {"delta.enableDeletionVectors", "false"},
      {"delta.enableChangeDataFeed", "false"},
      {"delta.checkpoint.writeStatsAsJson", "true"},
      {"delta.checkpoint.writeStatsAsStruct", "false"},
      {"delta.dataSkippingNumIndexedCols", "32"},
      {"delta.enableRowTracking", "false"},
      {"delta.enableInCommitTimestamps", "false"},
  };
  for (const auto& [key, value] : properties) {
    if (key.rfind("delta.", 0) != 0) continue;
    std::string lower = value;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (kHonoured.count(key)) {
      if ((key == "delta.enableTypeWidening" || key == "delta.appendOnly") && lower != "true" &&
          lower != "false") {
        throw ConfigError("table property " + key + " must be 'true' or 'false', not '" + value +
                          "'");
      }
      if (key == kColumnMappingMode) ColumnMappingModeOf(properties, "the new table");
      if (key == "delta.checkpointInterval" &&
          (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
           std::stoll(value) <= 0)) {
        throw ConfigError("table property delta.checkpointInterval must be a positive integer, "
                          "not '" + value + "'");
      }
      continue;
    }
    if (auto it = kOnlyDefault.find(key); it != kOnlyDefault.end()) {
      if (lower == it->second) continue;
      throw ConfigError("table property " + key + "='" + value +
                        "' is not supported by mssql-cdc's Delta writer; leave it at '" +
                        it->second + "'");
    }
    throw ConfigError("table property " + key + " is not supported by mssql-cdc's Delta writer");
  }
}

}  // namespace mssql_cdc::delta
