#include "catalog/table_sql.h"

#include <arrow/api.h>

#include <algorithm>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "delta/schema.h"

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
                                          delta::ToDeltaSchemaString(*arrow::schema(kept)), "1",
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
                              definition.properties.at(kSchemaVersionProperty), definition)
                  .empty());
}

TEST(MigrateTableSql, RefusesATableOfAnotherKind) {
  try {
    MigrateTableSql(Name("ops.table_finalization"), TableKind::kControl,
                    delta::ToDeltaSchemaString(*FactsSchema()), "", ControlTableOptions());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "table ops.table_finalization is not a control table: it has no "
                           "'table_name' column; name the control table itself, or a table "
                           "that does not exist yet");
  }
}

TEST(MigrateTableSql, RefusesAColumnOfAnotherType) {
  auto fields = ControlSchema()->fields();
  fields[1] = arrow::field("finalized_until", arrow::utf8());
  EXPECT_THROW(MigrateTableSql(Name("c"), TableKind::kControl,
                               delta::ToDeltaSchemaString(*arrow::schema(fields)), "4",
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

}  // namespace
}  // namespace mssql_cdc::catalog
