#include "silver/silver_schema.h"

#include <arrow/api.h>

#include <algorithm>
#include <set>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/user_text.h"
#include "delta/schema.h"
#include "engine/table_schemas.h"
#include "source/output_schema.h"

namespace mssql_cdc {
namespace {

bool IsBronzeOwnColumn(const std::string& name) {
  for (std::string_view own : {kCaptureInstanceColumn, kStartLsnColumn, kSeqvalColumn,
                               kOperationColumn, kCommandIdColumn, kCommitTsColumn,
                               kBatchIdColumn, kSnapshotColumn, kChunkColumn}) {
    if (EqualsIgnoringAsciiCase(name, own)) return true;
  }
  return false;
}

std::string Listed(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + QuoteUserText(name);
  return text.empty() ? "none" : text;
}

}  // namespace

std::vector<std::string> CapturedColumnNames(const arrow::Schema& bronze) {
  std::vector<std::string> names;
  for (const auto& field : bronze.fields()) {
    if (!IsBronzeOwnColumn(field->name())) names.push_back(field->name());
  }
  return names;
}

std::shared_ptr<arrow::Schema> SilverSchema(const arrow::Schema& bronze) {
  arrow::FieldVector fields;
  for (const auto& field : bronze.fields()) {
    if (!IsBronzeOwnColumn(field->name())) fields.push_back(field);
  }
  fields.push_back(delta::CommentedField(std::string(kStartLsnColumn), arrow::utf8(),
                             "commit LSN of the row's current image (the snapshot's LSN when "
                             "unchanged since a snapshot)"));
  fields.push_back(delta::CommentedField(std::string(kCommitTsColumn), arrow::timestamp(arrow::TimeUnit::MICRO),
                             "commit time of _start_lsn, UTC"));
  return arrow::schema(std::move(fields));
}

delta::CreateOptions SilverTableOptions(const arrow::Schema& bronze, const std::string& bronze_name,
                                        const std::string& bronze_id) {
  delta::CreateOptions options;
  options.schema = SilverSchema(bronze);
  options.description = "mssql-cdc silver: current state of each source key, kept from " +
                        (bronze_name.empty() ? std::string("its bronze table") : "bronze " + bronze_name) +
                        " by apply_changes";
  options.properties = {{kSchemaVersionProperty, kSilverSchemaVersion}, {kBronzeIdProperty, bronze_id}};
  return options;
}

std::vector<std::string> ResolveSilverKeys(const std::vector<std::string>& keys,
                                           const arrow::Schema& bronze, const std::string& bronze_name) {
  const auto captured = CapturedColumnNames(bronze);
  if (keys.empty()) {
    throw ConfigError("silver needs key columns: give keys (captured columns of " + bronze_name +
                      ": " + Listed(captured) + ")");
  }
  std::vector<std::string> resolved;
  std::set<std::string> seen;
  for (const auto& key : keys) {
    auto match = std::find_if(captured.begin(), captured.end(),
                              [&](const std::string& c) { return EqualsIgnoringAsciiCase(c, key); });
    if (match == captured.end()) {
      throw ConfigError("key " + QuoteUserText(key) + " is not a captured column of bronze " +
                        bronze_name + "; its captured columns are " + Listed(captured));
    }
    if (!seen.insert(*match).second) {
      throw ConfigError("key " + QuoteUserText(key) + " is given twice; give each key column once");
    }
    resolved.push_back(*match);
  }
  return resolved;
}

void CheckSilverOfBronze(const arrow::Schema& silver, const delta::StringMap& properties,
                         const std::string& silver_name, const arrow::Schema& bronze,
                         const std::string& bronze_name, const std::string& bronze_id,
                         const std::vector<std::string>& keys) {
  auto has = [](const arrow::Schema& schema, const std::string& name) {
    for (const auto& field : schema.fields()) {
      if (EqualsIgnoringAsciiCase(field->name(), name)) return true;
    }
    return false;
  };
  const std::string fix = "; name a silver table kept from " + bronze_name +
                          ", or a new one, which apply_changes creates";
  if (!has(silver, std::string(kStartLsnColumn))) {
    throw ConfigError(silver_name + " is not a silver table: it has no '_start_lsn' column" + fix);
  }
  for (const auto& key : keys) {
    if (!has(silver, key)) {
      throw ConfigError(silver_name + " is not silver of " + bronze_name + ": it has no key column " +
                        QuoteUserText(key) + fix);
    }
  }
  auto tied = properties.find(kBronzeIdProperty);
  if (tied != properties.end() && tied->second != bronze_id) {
    throw ConfigError(silver_name + " is kept from another bronze table (Delta table id " + tied->second +
                      "), not from " + bronze_name + " (id " + bronze_id +
                      "); name the silver table of this bronze, or a new one");
  }
  for (const auto& field : silver.fields()) {
    if (IsBronzeOwnColumn(field->name())) continue;
    if (!has(bronze, field->name())) {
      throw ConfigError(silver_name + " is not silver of " + bronze_name + ": its column " +
                        QuoteUserText(field->name()) + " is not one bronze captures" + fix);
    }
  }
  CheckSchemaVersion(properties, std::stoi(kSilverSchemaVersion), "silver table", "silver table " + silver_name);
}

void CheckSilverInstances(const std::vector<std::string>& found, const std::vector<std::string>& allowed,
                          const std::string& bronze_name) {
  for (const auto& instance : found) {
    const bool listed = std::any_of(allowed.begin(), allowed.end(), [&](const std::string& name) {
      return EqualsIgnoringAsciiCase(name, instance);
    });
    if (listed) continue;
    throw ConfigError("bronze " + bronze_name + " holds rows of capture instance " +
                      QuoteUserText(instance.empty() ? std::string("NULL") : instance) +
                      ", which is not one of the table's (" + Listed(allowed) +
                      "); after a capture-instance switch, give the stream's options so that "
                      "apply_changes can ask SQL Server which capture instances belong to the table");
  }
}

}  // namespace mssql_cdc
