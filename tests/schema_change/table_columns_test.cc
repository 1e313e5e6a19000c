#include "schema_change/table_columns.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "schema_change/ddl_kind.h"
#include "schema_change/table_instances.h"

namespace mssql_cdc {
namespace {

CapturedColumn Column(const char* name, const char* type, int ordinal) {
  return CapturedColumn{name, ordinal, ordinal, SqlType::Parse(type)};
}

TEST(TableColumnsTest, UnionKeepsOlderColumnsFirstAndTakesANewerTypeThatHolds) {
  const auto columns = UnionOfInstances(
      {{"dbo_t", {Column("id", "int", 1), Column("qty", "int", 2), Column("note", "varchar(10)", 3)}},
       {"dbo_t_v2", {Column("ID", "int", 1), Column("qty", "bigint", 2), Column("color", "varchar(5)", 3),
                     Column("note", "varchar(20)", 4)}}});
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].name, "ID");
  EXPECT_EQ(columns[1].type.ToString(), "bigint");
  EXPECT_EQ(columns[2].name, "note");
  EXPECT_EQ(columns[2].type.ToString(), "varchar(20)");
  EXPECT_EQ(columns[3].name, "color");
  EXPECT_EQ(columns[3].column_ordinal, 4);
}

TEST(TableColumnsTest, TwoInstancesTypingAColumnIncompatiblyAreRefusedWithTheWayOut) {
  try {
    UnionOfInstances({{"dbo_t", {Column("id", "int", 1), Column("qty", "decimal(10,2)", 2)}},
                      {"dbo_t_v2", {Column("id", "int", 1), Column("qty", "int", 2)}}});
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'dbo_t' and 'dbo_t_v2' type column 'qty' incompatibly"), std::string::npos)
        << message;
    EXPECT_NE(message.find("columns='qty INT, ...'"), std::string::npos) << message;
  }
}

TEST(TableColumnsTest, ColumnsNotHeldAreNewOrWider) {
  const auto reads = FieldsOf({Column("id", "int", 1), Column("qty", "int", 2)});
  const auto missing = ColumnsNotHeld(
      reads, {Column("id", "smallint", 1), Column("qty", "bigint", 2), Column("color", "int", 3)});
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].name, "qty");
  EXPECT_EQ(missing[1].name, "color");
  EXPECT_EQ(DescribeColumns(missing), "qty BIGINT, color INT");
}

TEST(DdlKindTest, StatementsAsSqlServerRecordsThem) {
  EXPECT_EQ(ClassifyDdl("ALTER TABLE [dbo].[t] ADD [color] varchar(10) NULL"), DdlKind::kAddColumn);
  EXPECT_EQ(ClassifyDdl("alter table dbo.t add color int, size int"), DdlKind::kAddColumn);
  EXPECT_EQ(ClassifyDdl("alter table dbo.t drop column color"), DdlKind::kDropColumn);
  EXPECT_EQ(ClassifyDdl("ALTER TABLE dbo.t ALTER COLUMN qty bigint"), DdlKind::kAlterColumn);
  EXPECT_EQ(ClassifyDdl("ALTER TABLE dbo.t ADD CONSTRAINT ck CHECK (qty > 0)"), DdlKind::kOther);
  EXPECT_EQ(ClassifyDdl("alter table dbo.t drop constraint ck"), DdlKind::kOther);
  EXPECT_EQ(ClassifyDdl("CREATE INDEX ix ON dbo.t(qty)"), DdlKind::kOther);
}

CaptureInstanceInfo Instance(const char* name, const char* table, std::uint64_t start) {
  CaptureInstanceInfo info;
  info.name = name;
  info.source_schema = "dbo";
  info.source_table = table;
  info.start_lsn = Lsn::FromUint64(start);
  return info;
}

TEST(TableInstancesTest, ANewerInstanceServesFromItsStart) {
  const auto instances = TableInstances::Of(
      {Instance("dbo_t_v2", "t", 50), Instance("dbo_other", "other", 1), Instance("dbo_t", "T", 10),
       Instance("dbo_t_v3", "t", 0)},
      Instance("dbo_t", "t", 10));
  ASSERT_EQ(instances.active().size(), 2u);
  EXPECT_EQ(instances.active()[0].name, "dbo_t");
  ASSERT_EQ(instances.pending().size(), 1u);
  EXPECT_EQ(instances.At(Lsn::FromUint64(49)).name, "dbo_t");
  EXPECT_EQ(instances.At(Lsn::FromUint64(50)).name, "dbo_t_v2");
  EXPECT_EQ(instances.At(Lsn::FromUint64(5)).name, "dbo_t");  // below every start: the oldest

  const auto segments = instances.Segments(Lsn::FromUint64(20), Lsn::FromUint64(80));
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].capture_instance, "dbo_t");
  EXPECT_EQ(segments[0].to, Lsn::FromUint64(49));
  EXPECT_EQ(segments[1].capture_instance, "dbo_t_v2");
  EXPECT_EQ(segments[1].from, Lsn::FromUint64(50));
  EXPECT_EQ(instances.Segments(Lsn::FromUint64(50), Lsn::FromUint64(80)).size(), 1u);

  // The batch (after, through] crosses S when after < S <= through.
  EXPECT_EQ(instances.SwitchesIn(Lsn::FromUint64(49), Lsn::FromUint64(50)).size(), 1u);
  EXPECT_TRUE(instances.SwitchesIn(Lsn::FromUint64(50), Lsn::FromUint64(90)).empty());
  EXPECT_TRUE(instances.SwitchesIn(Lsn::FromUint64(20), Lsn::FromUint64(49)).empty());
}

}  // namespace
}  // namespace mssql_cdc
