#include "delta/protocol.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <algorithm>
#include <set>

#include "core/errors.h"
#include "delta/schema.h"

namespace mssql_cdc::delta {
namespace {

constexpr int kFeaturesReaderVersion = 3;
constexpr int kFeaturesWriterVersion = 7;

// Reader features whose data this engine reads correctly.
const std::set<std::string> kReadableFeatures = {"timestampNtz", "typeWidening",
                                                 "vacuumProtocolCheck"};
// Writer features whose rules this engine follows when it commits. vacuumProtocolCheck only
// constrains VACUUM, which this engine does not run.
const std::set<std::string> kWritableFeatures = {"appendOnly", "invariants", "timestampNtz",
                                                 "typeWidening", "vacuumProtocolCheck"};

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

bool IsTrue(const StringMap& map, const std::string& key) {
  auto it = map.find(key);
  if (it == map.end()) return false;
  std::string value = it->second;
  std::transform(value.begin(), value.end(), value.begin(), ::tolower);
  return value == "true";
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

  Protocol result = current;
  result.min_reader_version = std::max(result.min_reader_version, 1);
  result.min_writer_version = std::max(result.min_writer_version, 2);
  bool has_all = std::all_of(needed.begin(), needed.end(), [&](const std::string& f) {
    return std::count(current.reader_features.begin(), current.reader_features.end(), f) &&
           std::count(current.writer_features.begin(), current.writer_features.end(), f);
  });
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

void CheckCanRead(const Protocol& protocol, const std::string& table) {
  if (protocol.min_reader_version == 2) {
    throw SourceError(table + " needs Delta reader version 2 (column mapping), which mssql-cdc "
                      "does not read yet");
  }
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
}

void CheckCanWrite(const Protocol& protocol, const std::string& table) {
  if (protocol.min_writer_version > kFeaturesWriterVersion ||
      (protocol.min_writer_version > 2 && protocol.min_writer_version < kFeaturesWriterVersion)) {
    throw ConfigError(table + " needs Delta writer version " +
                      std::to_string(protocol.min_writer_version) +
                      " (constraints, change data feed, generated or identity columns, column "
                      "mapping), which mssql-cdc does not write");
  }
  if (protocol.min_writer_version == kFeaturesWriterVersion) {
    for (const auto& feature : protocol.writer_features) {
      if (!kWritableFeatures.count(feature)) {
        throw ConfigError(table + " needs the Delta writer feature '" + feature +
                          "', which mssql-cdc does not implement");
      }
    }
  }
}

void CheckTableProperties(const StringMap& properties) {
  // Properties this engine honours, and properties it accepts only at their default value.
  static const std::set<std::string> kHonoured = {
      "delta.enableTypeWidening", "delta.appendOnly", "delta.checkpointInterval",
      "delta.logRetentionDuration", "delta.deletedFileRetentionDuration"};
  static const std::map<std::string, std::string> kOnlyDefault = {
      {"delta.enableDeletionVectors", "false"},
      {"delta.enableChangeDataFeed", "false"},
      {"delta.columnMapping.mode", "none"},
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
