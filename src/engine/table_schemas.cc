#include "engine/table_schemas.h"


#include <arrow/api.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/user_text.h"
#include "delta/schema.h"
#include "snapshot/plans_table.h"
#include "source/output_schema.h"
#include "storage/store.h"

namespace mssql_cdc {
namespace {

// mssql_cdc.schema_version of each table kind: the number of migrations the reference library
// 0.8.0 knows for it, whose current columns these are, so that a table written here reads as
// fully migrated to either library (tests/reference/test_api.py compares them). A
// kind's value grows by one with each migration. A plans table is made in 0.8.0's layout, with
// 0.8.0's version of it; the layout of one row per chunk that earlier releases of this engine
// made has its own count.
constexpr char kBronzeSchemaVersion[] = "2";
constexpr char kFactsSchemaVersion[] = "14";
constexpr char kControlSchemaVersion[] = "4";
constexpr char kPlansSchemaVersion[] = "0";
constexpr char kPlanEventsSchemaVersion[] = "1";

std::shared_ptr<arrow::DataType> Timestamp() {
  // TIMESTAMP_NTZ: naive UTC, microseconds, no time zone.
  return arrow::timestamp(arrow::TimeUnit::MICRO);
}

// The field with its "comment" metadata set (other metadata kept).
std::shared_ptr<arrow::Field> WithComment(const std::shared_ptr<arrow::Field>& field,
                                          const std::string& comment) {
  auto metadata = field->metadata() ? field->metadata()->Copy()
                                    : std::make_shared<arrow::KeyValueMetadata>();
  if (auto status = metadata->Set("comment", comment); !status.ok()) {
    throw InternalError("setting the comment of column " + field->name() + ": " +
                        status.ToString());
  }
  return field->WithMetadata(metadata);
}

// Comments of the output schema's metadata columns (docs/reference/tables.md).
const std::vector<std::pair<std::string_view, std::string>>& MetadataColumnComments() {
  static const std::vector<std::pair<std::string_view, std::string>> comments = {
      {kCaptureInstanceColumn,
       "CDC capture instance the row came from (for snapshot rows: the instance the snapshot "
       "was taken for)"},
      {kStartLsnColumn,
       "commit LSN of the change as 0x plus 20 uppercase hex digits, shared by a transaction; "
       "text order is commit order (snapshot rows: the LSN recorded before the read)"},
      {kSeqvalColumn,
       "order of the change within its transaction (__$seqval), same text form; a tie-breaker "
       "only; NULL on snapshot rows"},
      {kOperationColumn,
       "1 delete, 2 insert, 3 update before-image, 4 update after-image, 0 snapshot row"},
      {kCommandIdColumn,
       "statement order within the transaction (__$command_id); NULL on snapshot rows"},
      {kCommitTsColumn, "commit time of _start_lsn in UTC (from cdc.lsn_time_mapping)"},
  };
  return comments;
}

}  // namespace

std::shared_ptr<arrow::Schema> BronzeSchema(const std::shared_ptr<arrow::Schema>& output_schema) {
  if (!output_schema) throw InternalError("BronzeSchema needs the output schema");
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (const auto& field : output_schema->fields()) {
    std::shared_ptr<arrow::Field> out = field;
    for (const auto& [name, comment] : MetadataColumnComments()) {
      if (field->name() == name) out = WithComment(field, comment);
    }
    fields.push_back(std::move(out));
  }
  fields.push_back(delta::CommentedField("_batch_id", arrow::int32(),
                          "micro-batch that wrote the row; NULL on snapshot rows"));
  fields.push_back(delta::CommentedField("_snapshot", arrow::utf8(),
                          "on snapshot rows the snapshot's LSN, recorded before any of its rows "
                          "was read; NULL on change rows"));
  fields.push_back(delta::CommentedField("_chunk", arrow::int32(),
                          "chunk index of a row of a chunked snapshot; NULL otherwise"));
  return arrow::schema(std::move(fields));
}

std::shared_ptr<arrow::Schema> BronzeOutputSchema(const arrow::Schema& bronze) {
  arrow::FieldVector fields;
  for (const auto& field : bronze.fields()) {
    const auto& name = field->name();
    if (name != "_batch_id" && name != "_snapshot" && name != "_chunk") fields.push_back(field);
  }
  return arrow::schema(std::move(fields));
}

std::shared_ptr<arrow::Schema> FactsSchema() {
  static const auto schema = arrow::schema({
      delta::CommentedField("app_id", arrow::utf8(), "identity of the writer (with the generation suffix)"),
      delta::CommentedField("batch_id", arrow::int64(),
             "micro-batch id; with app_id the idempotency key; NULL on snapshot events"),
      delta::CommentedField("rows", arrow::int64(),
             "change rows written by the batch, or the rows of a snapshot event; 0 when none"),
      delta::CommentedField("min_lsn", arrow::utf8(), "lowest LSN of the batch's rows (events: the event's LSN)"),
      delta::CommentedField("max_lsn", arrow::utf8(),
             "highest LSN of the batch's rows (events: the event's LSN)"),
      delta::CommentedField("min_commit_ts", Timestamp(), "earliest commit time of the batch's rows, UTC"),
      delta::CommentedField("max_commit_ts", Timestamp(), "latest commit time of the batch's rows, UTC"),
      delta::CommentedField("deletes", arrow::int64(), "rows of operation 1 (delete)"),
      delta::CommentedField("inserts", arrow::int64(), "rows of operation 2 (insert)"),
      delta::CommentedField("updates", arrow::int64(),
             "rows of operation 4 (update after-image); before-images are not counted"),
      delta::CommentedField("started_at", Timestamp(), "when writing the batch started, UTC"),
      delta::CommentedField("duration_ms", arrow::int64(),
             "milliseconds spent reading, writing facts and appending; planning and the "
             "checkpoint are excluded"),
      delta::CommentedField("source_rtt_ms", arrow::float64(),
             "median round trip of one SELECT 1 over the partitions' connections, ms"),
      delta::CommentedField("read_seconds", arrow::float64(), "seconds spent reading, summed over partitions"),
      delta::CommentedField("read_mb", arrow::float64(), "megabytes of Arrow data read, summed over partitions"),
      delta::CommentedField("network_wait_ms", arrow::int64(),
             "milliseconds the engine's reader waited for the server's bytes, summed over "
             "partitions; NULL where an ODBC driver or the sim backend read the changes"),
      delta::CommentedField("retention_watermark_ts", Timestamp(),
             "commit time of the capture instance's minimum LSN seen after reading: changes "
             "before it are cleaned up"),
      delta::CommentedField("retention_headroom_hours", arrow::float64(),
             "hours from the retention watermark to end_commit_ts: how far the stream is from "
             "losing data"),
      delta::CommentedField("event", arrow::utf8(),
             "NULL for a micro-batch; otherwise the kind of event (bootstrap, resnapshot, "
             "data_skipped, ...)"),
      delta::CommentedField("lost_from_ts", Timestamp(),
             "start of a range of changes lost to cleanup (commit time of the last processed "
             "offset)"),
      delta::CommentedField("lost_to_ts", Timestamp(),
             "end of a range of changes lost to cleanup (commit time of the minimum LSN when "
             "the loss was found)"),
      delta::CommentedField("source_max_commit_ts", Timestamp(),
             "commit time of the source's maximum LSN seen after reading"),
      delta::CommentedField("capture_lag_seconds", arrow::float64(),
             "seconds from source_max_commit_ts to the moment a partition read it (largest)"),
      delta::CommentedField("ingestion_lag_seconds", arrow::float64(),
             "seconds from end_commit_ts to source_max_commit_ts"),
      delta::CommentedField("end_lsn", arrow::utf8(),
             "end offset LSN of the batch (events: the event's LSN); NULL when no range was "
             "planned"),
      delta::CommentedField("end_commit_ts", Timestamp(), "commit time of end_lsn, UTC"),
      delta::CommentedField("detail", arrow::utf8(), "event payload as JSON or text"),
      delta::CommentedField("target", arrow::utf8(), "name or path of the table written"),
      delta::CommentedField("written_at", Timestamp(), "when this facts row was written, after the target's "
                                        "commit, UTC"),
  });
  return schema;
}

std::shared_ptr<arrow::Schema> ControlSchema() {
  static const auto schema = arrow::schema({
      delta::CommentedField("table_name", arrow::utf8(),
             "name the verdict is kept under, exactly as passed (key of the row)"),
      delta::CommentedField("finalized_until", Timestamp(),
             "verdict, UTC: every period ending at or before it is complete in the table; "
             "only moves forward"),
      delta::CommentedField("end_lsn", arrow::utf8(), "batch end LSN that last moved the verdict"),
      delta::CommentedField("end_commit_ts", Timestamp(),
             "commit time of end_lsn, UTC; the verdict is this truncated to the period"),
      delta::CommentedField("updated_at", Timestamp(), "when the verdict last moved, UTC"),
      delta::CommentedField("applied_lsn", arrow::utf8(), "silver only: highest bronze LSN applied"),
      delta::CommentedField("snapshot_lsn", arrow::utf8(), "silver only: snapshot silver was last rebuilt from"),
      delta::CommentedField("open_snapshot_lsn", arrow::utf8(),
             "silver only: chunked snapshot being applied wave by wave"),
      delta::CommentedField("snapshot_wave", arrow::int32(), "silver only: last wave applied of that snapshot"),
  });
  return schema;
}

namespace {

// A table of the engine: its schema, its comment and the schema version it is at.
delta::CreateOptions EngineTableOptions(std::shared_ptr<arrow::Schema> schema,
                                        std::string description,
                                        const std::string& schema_version) {
  delta::CreateOptions options;
  options.schema = std::move(schema);
  options.description = std::move(description);
  options.properties = {{kSchemaVersionProperty, schema_version}};
  return options;
}

}  // namespace

delta::CreateOptions BronzeTableOptions(const std::shared_ptr<arrow::Schema>& output_schema,
                                        const std::string& capture_instance) {
  const std::string instance =
      capture_instance.empty() ? "a SQL Server capture instance"
                               : "SQL Server capture instance " + capture_instance;
  return EngineTableOptions(
      BronzeSchema(output_schema),
      "mssql-cdc bronze: append-only change log of " + instance + ", one append per micro-batch",
      kBronzeSchemaVersion);
}

delta::CreateOptions FactsTableOptions() {
  return EngineTableOptions(
      FactsSchema(),
      "mssql-cdc facts: one row per micro-batch or event of every stream writing here",
      kFactsSchemaVersion);
}

delta::CreateOptions PlansTableOptions() {
  return EngineTableOptions(
      PlanEventsSchema(),
      "mssql-cdc snapshot plans: the key values of the chunked snapshots of the bronze table "
      "beside it (each key extent, chunk plan and chunk read), which the facts rows leave out; "
      "give it bronze's access policy",
      kPlanEventsSchemaVersion);
}

delta::CreateOptions ControlTableOptions() {
  return EngineTableOptions(
      ControlSchema(),
      "mssql-cdc control: completeness verdict (finalized_until) per table, moved forward only",
      kControlSchemaVersion);
}

delta::DeltaTable OpenOrCreateTable(const std::string& uri, const delta::CreateOptions& options) {
  if (delta::DeltaTable::Exists(uri)) return delta::DeltaTable::Open(uri);
  return delta::DeltaTable::Create(uri, options);
}

std::vector<std::string> RequiredColumns(TableKind kind) {
  // Columns every version of the table has had; later ones are added by migrations.
  switch (kind) {
    case TableKind::kBronze:
      return {"_capture_instance", "_start_lsn", "_seqval", "_operation", "_commit_ts"};
    case TableKind::kFacts:
      return {"app_id", "batch_id", "rows", "event", "end_lsn", "target"};
    case TableKind::kControl:
    case TableKind::kPlans: {
      std::vector<std::string> required;
      const auto schema = kind == TableKind::kControl ? ControlSchema() : PlansSchema();
      for (const auto& field : schema->fields()) required.push_back(field->name());
      return required;
    }
  }
  return {};
}

const char* TableKindName(TableKind kind) {
  switch (kind) {
    case TableKind::kBronze: return "bronze table";
    case TableKind::kFacts: return "facts table";
    case TableKind::kControl: return "control table";
    case TableKind::kPlans: return "plans table";
  }
  return "table";
}

int SchemaVersionOf(TableKind kind) {
  switch (kind) {
    case TableKind::kBronze: return std::stoi(kBronzeSchemaVersion);
    case TableKind::kFacts: return std::stoi(kFactsSchemaVersion);
    case TableKind::kControl: return std::stoi(kControlSchemaVersion);
    case TableKind::kPlans: return std::stoi(kPlansSchemaVersion);
  }
  return 0;
}

void CheckSchemaVersion(const delta::StringMap& properties, int known, const std::string& what,
                        const std::string& where) {
  const std::string upgrade =
      ": upgrade mssql-cdc to a release that knows it, or give a " + what + " of its own";
  for (const char* property : {kSchemaVersionProperty, kMinVersionProperty}) {
    auto found = properties.find(property);
    if (found == properties.end()) continue;
    const std::string& text = found->second;
    const bool whole = !text.empty() && text.size() <= 9 &&
                       std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!whole) {
      throw ConfigError(where + " has table property " + property + " = " + QuoteUserText(text) +
                        ", which is not a schema version (a whole number); it was not written by "
                        "mssql-cdc as such. Set it back to the number of the table's migrations, "
                        "or give a " + what + " of its own");
    }
    if (const int version = std::stoi(text); version > known) {
      const bool minimum = std::string_view(property) == kMinVersionProperty;
      throw ConfigError(where + (minimum ? " may only be written by a release that knows at least "
                                         : " was migrated by a newer release to schema version ") +
                        std::to_string(version) + (minimum ? " " + what + " migrations" : "") +
                        " (table property " + property + "); this release knows " +
                        std::to_string(known) + upgrade);
    }
  }
}

bool IsReferencePlansTable(TableKind kind, const std::vector<std::string>& columns) {
  return kind == TableKind::kPlans && PlansLayoutOf(columns) == PlansLayout::kEventRows;
}

void CheckTableColumns(const std::vector<std::string>& columns, TableKind kind,
                       const std::string& where, const std::string& fix) {
  if (IsReferencePlansTable(kind, columns)) return;  // its snapshots are continued
  for (const auto& column : RequiredColumns(kind)) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      const std::string what = TableKindName(kind);
      throw ConfigError(where + " is not a " + what + ": it has no '" + column + "' column; " +
                        fix);
    }
  }
}

void CheckExistingTable(const std::string& uri, TableKind kind) {
  storage::CheckDirectoryLocation(uri, TableKindName(kind));
  if (!delta::DeltaTable::Exists(uri)) return;
  const auto table = delta::DeltaTable::Open(uri);
  const std::string what = TableKindName(kind);
  const auto columns = table.state().schema()->field_names();
  CheckTableColumns(columns, kind, "Delta table " + uri,
                    "give the " + what + "'s own path, or a path where none exists");
  if (IsReferencePlansTable(kind, columns)) return;  // 0.8.0 counts its versions on its own
  CheckSchemaVersion(table.state().metadata.configuration, SchemaVersionOf(kind), what,
                     "Delta table " + uri);
}

void CheckExistingBronze(const std::string& uri, const std::shared_ptr<arrow::Schema>& bronze_schema) {
  storage::CheckDirectoryLocation(uri, TableKindName(TableKind::kBronze));
  if (!delta::DeltaTable::Exists(uri)) return;
  auto table = delta::DeltaTable::Open(uri);
  CheckTableColumns(table.state().schema()->field_names(), TableKind::kBronze,
                    "Delta table " + uri, "give the bronze table's own path, or a path where none exists");
  CheckSchemaVersion(table.state().metadata.configuration, SchemaVersionOf(TableKind::kBronze),
                     TableKindName(TableKind::kBronze), "Delta table " + uri);
  if (const auto missing = table.MissingFiles(kNewestCommitsChecked); !missing.empty()) {
    throw SourceError(MissingFilesMessage(TableKindName(TableKind::kBronze), uri, missing));
  }
  table.StageAppend(bronze_schema);  // plans the append's schema change; writes nothing
}

std::string MissingFilesMessage(const std::string& what, const std::string& uri,
                                const std::vector<std::string>& missing) {
  std::string names;
  for (std::size_t i = 0; i < missing.size() && i < 3; ++i) names += (i > 0 ? ", " : "") + QuoteUserText(missing[i]);
  if (missing.size() > 3) names += " and " + std::to_string(missing.size() - 3) + " more";
  return what + " " + QuoteUserText(uri, kPathShown) + ": its log names " + std::to_string(missing.size()) +
         " data file(s) that are missing (" + names + "), so every reader of the table fails. "
         "Put the files back (from a backup or the store's object versions) and run again; "
         "if they are lost, so are their rows: move the table and its checkpoint aside and run "
         "with bootstrap = true to take the table again";
}

void SharedTableChecks::Check(const std::string& uri, TableKind kind) {
  std::lock_guard lock(mutex_);
  const auto key = std::pair{NormalLocation(uri), kind};
  if (checked_.count(key)) return;
  storage::CheckDirectoryLocation(uri, TableKindName(kind));
  if (!delta::DeltaTable::Exists(uri)) return;  // not remembered: a later check may find one
  CheckExistingTable(uri, kind);
  checked_.insert(key);
}

std::string NormalLocation(const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  return std::filesystem::absolute(std::filesystem::path(location)).lexically_normal().string();
}

}  // namespace mssql_cdc
