#include "catalog/table_sql.h"

#include <arrow/api.h>

#include <algorithm>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "delta/schema.h"
#include "snapshot/plans_table.h"

namespace mssql_cdc::catalog {
namespace {

TableRef Name(const char* text) { return TableRef::Parse(text, "table"); }

TEST(CreateTableSql, DeclaresEveryColumnWithItsTypeAndComment) {
  const std::string sql = CreateTableSql(Name("ops.ingestion_facts"), FactsTableOptions());
  EXPECT_EQ(sql.rfind("CREATE TABLE IF NOT EXISTS `ops`.`ingestion_facts` (`app_id` STRING COMMENT '", 0),
            0u)
      << sql;
  for (const auto& field : FactsSchema()->fields()) {
    EXPECT_NE(sql.find(QuoteIdentifier(field->name()) + " "), std::string::npos) << field->name();
  }
  EXPECT_NE(sql.find("`batch_id` BIGINT"), std::string::npos) << sql;
  EXPECT_NE(sql.find(" TIMESTAMP_NTZ"), std::string::npos) << sql;
  EXPECT_NE(sql.find(") USING delta COMMENT 'mssql-cdc facts: "), std::string::npos) << sql;
  EXPECT_NE(sql.find("TBLPROPERTIES ('mssql_cdc.schema_version' = '"), std::string::npos) << sql;
}

TEST(MigrateTableSql, AddsTheColumnsAnOlderTableLacksAndItsVersion) {
  // A facts table of an older release: without two columns added since the first.
  const auto required = RequiredColumns(TableKind::kFacts);
  std::vector<std::shared_ptr<arrow::Field>> kept, dropped;
  for (const auto& field : FactsSchema()->fields()) {
    const bool is_required =
        std::find(required.begin(), required.end(), field->name()) != required.end();
    (is_required || dropped.size() == 2 ? kept : dropped).push_back(field);
  }
  const auto statements = MigrateTableSql(Name("ops.ingestion_facts"), TableKind::kFacts,
                                          delta::ToDeltaSchemaString(*arrow::schema(kept)),
                                          {{kSchemaVersionProperty, "1"}},
                                          FactsTableOptions());
  ASSERT_EQ(statements.size(), 2u);
  const std::string add = "ALTER TABLE `ops`.`ingestion_facts` ADD COLUMNS (" +
                          QuoteIdentifier(dropped[0]->name()) + " ";
  EXPECT_EQ(statements[0].rfind(add, 0), 0u) << statements[0];
  EXPECT_NE(statements[0].find(", " + QuoteIdentifier(dropped[1]->name()) + " "),
            std::string::npos);
  EXPECT_NE(statements[1].find("SET TBLPROPERTIES ('mssql_cdc.schema_version' = '"),
            std::string::npos);
}

TEST(MigrateTableSql, NothingForATableThatIsUpToDate) {
  auto definition = FactsTableOptions();
  EXPECT_TRUE(MigrateTableSql(Name("f"), TableKind::kFacts,
                              delta::ToDeltaSchemaString(*FactsSchema()),
                              definition.properties, definition)
                  .empty());
}

TEST(MigrateTableSql, NothingForThePlansTableOfAReferenceChunkedSnapshot) {
  // mssql-cdc-pyspark 0.8.0's plans table (its own schema version) is appended to as it is.
  EXPECT_TRUE(MigrateTableSql(Name("bronze.orders_snapshot_plans"), TableKind::kPlans,
                              delta::ToDeltaSchemaString(*PlanEventsSchema()), {{kSchemaVersionProperty, "1"}},
                              PlansTableOptions())
                  .empty());
}

TEST(MigrateTableSql, RefusesATableOfAnotherKind) {
  try {
    MigrateTableSql(Name("ops.table_finalization"), TableKind::kControl,
                    delta::ToDeltaSchemaString(*FactsSchema()), {}, ControlTableOptions());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "table ops.table_finalization is not a control table: it has no "
                           "'table_name' column; name the control table itself, or a table "
                           "that does not exist yet");
  }
}

TEST(MigrateTableSql, RefusesATableANewerReleaseMigrated) {
  // Stamped by a release that knows more facts migrations, or one that forbids older writers:
  // writing it would leave out what that release keeps there.
  const std::string facts = delta::ToDeltaSchemaString(*FactsSchema());
  const std::string known = std::to_string(SchemaVersionOf(TableKind::kFacts));
  const std::string newer = std::to_string(SchemaVersionOf(TableKind::kFacts) + 1);
  try {
    MigrateTableSql(Name("ops.facts"), TableKind::kFacts, facts, {{kSchemaVersionProperty, newer}},
                    FactsTableOptions());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "table ops.facts was migrated by a newer release to schema version " + newer +
                  " (table property mssql_cdc.schema_version); this release knows " + known +
                  ": upgrade mssql-cdc to a release that knows it, or give a facts table of its own");
  }
  try {
    MigrateTableSql(Name("ops.facts"), TableKind::kFacts, facts,
                    {{kSchemaVersionProperty, known}, {kMinVersionProperty, newer}}, FactsTableOptions());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "table ops.facts may only be written by a release that knows at least " + newer +
                  " facts table migrations (table property mssql_cdc.min_version); this release "
                  "knows " + known + ": upgrade mssql-cdc to a release that knows it, or give a "
                  "facts table of its own");
  }
  EXPECT_THROW(MigrateTableSql(Name("ops.facts"), TableKind::kFacts, facts,
                               {{kSchemaVersionProperty, "fourteen"}}, FactsTableOptions()),
               ConfigError);
  // A minimum this release meets writes as usual.
  EXPECT_TRUE(MigrateTableSql(Name("ops.facts"), TableKind::kFacts, facts,
                              {{kSchemaVersionProperty, known}, {kMinVersionProperty, known}},
                              FactsTableOptions())
                  .empty());
}

TEST(MigrateTableSql, WidensAColumnWhereTheTablesOwnPropertiesAllowIt) {
  // The table has snapshot_wave as int; the data brings a long.
  auto definition = ControlTableOptions();
  auto fields = definition.schema->fields();
  const int wave = definition.schema->GetFieldIndex("snapshot_wave");
  fields[wave] = fields[wave]->WithType(arrow::int64());
  definition.schema = arrow::schema(fields);
  const std::string existing = delta::ToDeltaSchemaString(*ControlSchema());
  try {
    MigrateTableSql(Name("ops.control"), TableKind::kControl, existing, {}, definition);
    FAIL() << "no error";
  } catch (const SchemaChangedError& e) {
    // The statement names the table as SQL names it, not as a path.
    EXPECT_NE(std::string(e.what()).find("run ALTER TABLE `ops`.`control` SET TBLPROPERTIES "
                                         "('delta.enableTypeWidening'='true')"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(MigrateTableSql(Name("ops.control"), TableKind::kControl, existing,
                                  {{"delta.enableTypeWidening", "TRUE"}}, definition));
}

TEST(MigrateTableSql, RefusesAColumnOfAnotherType) {
  auto fields = ControlSchema()->fields();
  fields[1] = arrow::field("finalized_until", arrow::utf8());
  EXPECT_THROW(MigrateTableSql(Name("c"), TableKind::kControl,
                               delta::ToDeltaSchemaString(*arrow::schema(fields)),
                               {{kSchemaVersionProperty, "4"}},
                               ControlTableOptions()),
               Error);
}

TEST(AdvanceVerdictSql, MovesForwardOnlyAndQuotesTheTableName) {
  Offset end;
  end.lsn = Lsn::Parse("0x0000002A000001000001");
  end.commit_ts = UtcMicros{(1'700'000'000LL + 1234) * 1'000'000};
  const std::string sql = AdvanceVerdictSql(Name("ops.table_finalization"), "bronze.it's", end,
                                            Granularity::kHour);
  EXPECT_EQ(sql.rfind("MERGE INTO `ops`.`table_finalization` AS t USING (SELECT 'bronze.it\\'s' AS table_name", 0), 0u)
      << sql;
  EXPECT_NE(sql.find("WHEN MATCHED AND (t.finalized_until IS NULL OR t.finalized_until < "
                     "s.finalized_until)"),
            std::string::npos);
  EXPECT_NE(sql.find("'2023-11-14 22:00:00.000000'"), std::string::npos) << sql;
  end.commit_ts.reset();
  EXPECT_EQ(AdvanceVerdictSql(Name("c"), "t", end, Granularity::kHour), "");
}

// A bronze output schema of dbo.orders, with the column "Qty (kg)" or without it.
std::shared_ptr<arrow::Schema> OrdersOutput(bool with_qty) {
  arrow::FieldVector fields = {
      arrow::field("_capture_instance", arrow::utf8()), arrow::field("_start_lsn", arrow::utf8()),
      arrow::field("_seqval", arrow::utf8()), arrow::field("_operation", arrow::int32()),
      arrow::field("_commit_ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("id", arrow::int64())};
  if (with_qty) fields.push_back(arrow::field("Qty (kg)", arrow::float64()));
  return arrow::schema(fields);
}

// A captured column whose name Spark stores only with column mapping: a new bronze table gets
// it; an existing one without it is refused with the ALTER TABLE that enables it.
TEST(CreateTableSql, ANameThatNeedsColumnMappingTurnsItOn) {
  const std::string sql = CreateTableSql(Name("lake.orders"), BronzeTableOptions(OrdersOutput(true), "dbo_orders"));
  EXPECT_NE(sql.find("`Qty (kg)` DOUBLE"), std::string::npos) << sql;
  EXPECT_NE(sql.find("'delta.columnMapping.mode' = 'name'"), std::string::npos) << sql;
  const std::string plain = CreateTableSql(Name("lake.orders"), BronzeTableOptions(OrdersOutput(false), ""));
  EXPECT_EQ(plain.find("columnMapping"), std::string::npos) << plain;
}

TEST(MigrateTableSql, ANewColumnThatNeedsColumnMappingIsRefusedWithTheAlter) {
  const auto existing = BronzeTableOptions(OrdersOutput(false), "");
  const std::string existing_json = delta::ToDeltaSchemaString(*existing.schema);
  try {
    MigrateTableSql(Name("lake.orders"), TableKind::kBronze, existing_json, existing.properties,
                    BronzeTableOptions(OrdersOutput(true), ""));
    FAIL() << "no error";
  } catch (const SchemaChangedError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "ALTER TABLE `lake`.`orders` SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
                  "'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')"),
              std::string::npos)
        << e.what();
  }
  auto mapped = existing.properties;
  mapped["delta.columnMapping.mode"] = "name";
  const auto statements = MigrateTableSql(Name("lake.orders"), TableKind::kBronze, existing_json,
                                          mapped, BronzeTableOptions(OrdersOutput(true), ""));
  ASSERT_FALSE(statements.empty());
  EXPECT_NE(statements[0].find("ADD COLUMNS (`Qty (kg)` DOUBLE"), std::string::npos) << statements[0];
}

}  // namespace
}  // namespace mssql_cdc::catalog
