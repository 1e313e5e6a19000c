// The engine's table definitions: names, order and types of the columns the reference
// documents, a comment on every library-defined column, table comments and the schema-version
// property, and that Delta keeps them.
#include "engine/table_schemas.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "delta/table.h"
#include "snapshot/plans_table.h"
#include "source/output_schema.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

using Columns = std::vector<std::pair<std::string, std::string>>;  // name, Arrow type

Columns NamesAndTypes(const arrow::Schema& schema) {
  Columns columns;
  for (const auto& field : schema.fields()) {
    columns.emplace_back(field->name(), field->type()->ToString());
  }
  return columns;
}

std::string CommentOf(const arrow::Field& field) {
  if (!field.metadata()) return "";
  auto comment = field.metadata()->Get("comment");
  return comment.ok() ? *comment : "";
}

void ExpectEveryColumnCommented(const arrow::Schema& schema) {
  for (const auto& field : schema.fields()) {
    EXPECT_GE(CommentOf(*field).size(), 10u) << field->name() << " has no real comment";
  }
}

constexpr char kTs[] = "timestamp[us]";

TEST(TableSchemasFacts, HasTheDocumentedColumnsInOrder) {
  Columns expected = {
      {"app_id", "string"},
      {"batch_id", "int64"},
      {"rows", "int64"},
      {"min_lsn", "string"},
      {"max_lsn", "string"},
      {"min_commit_ts", kTs},
      {"max_commit_ts", kTs},
      {"deletes", "int64"},
      {"inserts", "int64"},
      {"updates", "int64"},
      {"started_at", kTs},
      {"duration_ms", "int64"},
      {"source_rtt_ms", "double"},
      {"read_seconds", "double"},
      {"read_mb", "double"},
      {"network_wait_ms", "int64"},
      {"retention_watermark_ts", kTs},
      {"retention_headroom_hours", "double"},
      {"event", "string"},
      {"lost_from_ts", kTs},
      {"lost_to_ts", kTs},
      {"source_max_commit_ts", kTs},
      {"capture_lag_seconds", "double"},
      {"ingestion_lag_seconds", "double"},
      {"end_lsn", "string"},
      {"end_commit_ts", kTs},
      {"detail", "string"},
      {"target", "string"},
      {"written_at", kTs},
  };
  auto schema = FactsSchema();
  ASSERT_EQ(schema->num_fields(), 29);
  EXPECT_EQ(NamesAndTypes(*schema), expected);
  ExpectEveryColumnCommented(*schema);
  for (const auto& field : schema->fields()) EXPECT_TRUE(field->nullable()) << field->name();
}

TEST(TableSchemasControl, HasTheDocumentedColumnsInOrder) {
  Columns expected = {
      {"table_name", "string"},  {"finalized_until", kTs}, {"end_lsn", "string"},
      {"end_commit_ts", kTs},    {"updated_at", kTs},      {"applied_lsn", "string"},
      {"snapshot_lsn", "string"}, {"open_snapshot_lsn", "string"}, {"snapshot_wave", "int32"},
  };
  auto schema = ControlSchema();
  EXPECT_EQ(NamesAndTypes(*schema), expected);
  ExpectEveryColumnCommented(*schema);
}

TEST(TableSchemasBronze, AppendsBatchSnapshotAndChunkAfterTheOutputColumns) {
  CapturedColumn id;
  id.name = "id";
  id.type.name = "int";
  CapturedColumn name;
  name.name = "name";
  name.type.name = "nvarchar";
  auto output = OutputSchema({id, name}, /*include_command_id=*/true);
  auto bronze = BronzeSchema(output);

  Columns expected = NamesAndTypes(*output);
  expected.insert(expected.end(), {{"_batch_id", "int32"}, {"_snapshot", "string"},
                                   {"_chunk", "int32"}});
  EXPECT_EQ(NamesAndTypes(*bronze), expected);
  // Library-defined columns carry comments; the captured columns stay as the source has them.
  for (const auto& field : bronze->fields()) {
    bool captured = field->name() == "id" || field->name() == "name";
    EXPECT_EQ(CommentOf(*field).empty(), captured) << field->name();
  }
}

TEST(TableSchemasBronze, KeepsOtherFieldMetadataOfTheOutputSchema) {
  auto output = arrow::schema(
      {arrow::field("_start_lsn", arrow::utf8(), true, arrow::key_value_metadata({"x"}, {"y"}))});
  auto bronze = BronzeSchema(output);
  EXPECT_EQ(*bronze->field(0)->metadata()->Get("x"), "y");
  EXPECT_FALSE(CommentOf(*bronze->field(0)).empty());
}

TEST(TableSchemasOptions, CarrySchemaCommentAndVersion) {
  auto output = OutputSchema(arrow::FieldVector{}, /*include_command_id=*/false);
  // The reference library's migration counts per kind (docs/reference/tables.md).
  const std::map<std::string, std::string> versions = {{"bronze", "2"}, {"facts", "14"}, {"control", "4"}};
  std::vector<std::pair<std::string, delta::CreateOptions>> kinds = {
      {"bronze", BronzeTableOptions(output, "dbo_orders")},
      {"facts", FactsTableOptions()},
      {"control", ControlTableOptions()},
  };
  for (const auto& [kind, options] : kinds) {
    ASSERT_TRUE(options.schema) << kind;
    ASSERT_TRUE(options.description) << kind;
    EXPECT_NE(options.description->find(kind), std::string::npos) << *options.description;
    EXPECT_EQ(options.properties.at(kSchemaVersionProperty), versions.at(kind)) << kind;
  }
  EXPECT_NE(kinds[0].second.description->find("dbo_orders"), std::string::npos);
  EXPECT_TRUE(kinds[1].second.schema->Equals(*FactsSchema(), /*check_metadata=*/true));
  EXPECT_TRUE(kinds[2].second.schema->Equals(*ControlSchema(), /*check_metadata=*/true));
}

TEST(TableSchemasOptions, DeltaKeepsCommentsAndProperties) {
  testing::TempDir dir(testing::TempDir::Mode::kNameOnly);
  delta::DeltaTable::Create(dir.path(), FactsTableOptions());
  auto table = delta::DeltaTable::Open(dir.path());
  const auto& metadata = table.state().metadata;
  EXPECT_EQ(metadata.configuration.at(kSchemaVersionProperty), "14");
  EXPECT_EQ(metadata.description, FactsTableOptions().description);
  auto schema = table.state().schema();
  ASSERT_EQ(schema->num_fields(), FactsSchema()->num_fields());
  for (int i = 0; i < schema->num_fields(); ++i) {
    EXPECT_EQ(CommentOf(*schema->field(i)), CommentOf(*FactsSchema()->field(i)));
  }
  // A second creation with the same definition finds the table and adds nothing.
  EXPECT_EQ(delta::DeltaTable::Create(dir.path(), FactsTableOptions()).state().version, 0);
}

TEST(SharedTableChecks, RefusesATableOfAnotherKindEveryTimeItIsNamed) {
  testing::TempDir dir(testing::TempDir::Mode::kNameOnly);
  delta::DeltaTable::Create(dir.path(), ControlTableOptions());
  SharedTableChecks checks;
  // A refusal is not remembered as a pass: the next stream that names the table is refused too.
  for (int stream = 0; stream < 2; ++stream) {
    EXPECT_THROW(checks.Check(dir.path(), TableKind::kFacts), ConfigError);
  }
  checks.Check(dir.path(), TableKind::kControl);
}

TEST(CheckExistingTable, RefusesATableANewerReleaseMigrated) {
  testing::TempDir dir(testing::TempDir::Mode::kNameOnly);
  auto options = FactsTableOptions();
  options.properties[kMinVersionProperty] = std::to_string(SchemaVersionOf(TableKind::kFacts) + 1);
  delta::DeltaTable::Create(dir.path(), options);
  try {
    CheckExistingTable(dir.path(), TableKind::kFacts);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("may only be written by a release that knows at least"),
              std::string::npos) << e.what();
  }
  // The same table with a minimum this release meets is a facts table like any other.
  testing::TempDir other(testing::TempDir::Mode::kNameOnly);
  options.properties[kMinVersionProperty] = std::to_string(SchemaVersionOf(TableKind::kFacts));
  delta::DeltaTable::Create(other.path(), options);
  CheckExistingTable(other.path(), TableKind::kFacts);
}

TEST(CheckExistingTable, TakesThePlansTableOfAReferenceChunkedSnapshotAsItIs) {
  // mssql-cdc-pyspark 0.8.0 keeps its plans under the same name, one row per snapshot event,
  // stamped with its own schema version: this engine goes on with its snapshots.
  testing::TempDir dir(testing::TempDir::Mode::kNameOnly);
  delta::CreateOptions theirs;
  theirs.schema = PlanEventsSchema();
  theirs.properties = {{kSchemaVersionProperty, "7"}};
  delta::DeltaTable::Create(dir.path(), theirs);
  EXPECT_NO_THROW(CheckExistingTable(dir.path(), TableKind::kPlans));
  // Another kind's table is still no plans table.
  testing::TempDir other(testing::TempDir::Mode::kNameOnly);
  delta::DeltaTable::Create(other.path(), ControlTableOptions());
  EXPECT_THROW(CheckExistingTable(other.path(), TableKind::kPlans), ConfigError);
}

TEST(SharedTableChecks, ChecksATableCreatedAfterAnEarlierCheckFoundNone) {
  testing::TempDir dir(testing::TempDir::Mode::kNameOnly);
  SharedTableChecks checks;
  checks.Check(dir.path(), TableKind::kFacts);  // nothing there yet
  delta::DeltaTable::Create(dir.path(), ControlTableOptions());
  EXPECT_THROW(checks.Check(dir.path(), TableKind::kFacts), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc
