// Column mapping by name: a table created with a name Spark cannot store without it, its data
// files under physical names with field ids, stats keyed by them, new columns given the next
// id, and a table without mapping refusing such a column with the ALTER TABLE that enables it.
#include "delta/column_mapping.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/schema.h>

#include <filesystem>
#include <set>

#include "core/errors.h"
#include "delta/table.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

std::shared_ptr<arrow::RecordBatch> KeyQtyBatch(std::int64_t first, std::int64_t count,
                                                const std::string& qty_name = "Qty (kg)") {
  arrow::Int64Builder keys;
  arrow::DoubleBuilder quantities;
  for (std::int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(keys.Append(i).ok());
    EXPECT_TRUE(quantities.Append(static_cast<double>(i) / 2).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field(qty_name, arrow::float64())});
  return arrow::RecordBatch::Make(schema, count, {*keys.Finish(), *quantities.Finish()});
}

CreateOptions KeyQtyOptions(StringMap properties = {}) {
  CreateOptions options;
  options.schema = KeyQtyBatch(0, 0)->schema();
  options.properties = std::move(properties);
  return options;
}

// The top-level column names and field ids of a Parquet data file.
std::vector<std::pair<std::string, int>> ParquetColumns(const std::string& path) {
  auto reader = parquet::ParquetFileReader::OpenFile(path);
  const auto* root = reader->metadata()->schema()->group_node();
  std::vector<std::pair<std::string, int>> columns;
  for (int i = 0; i < root->field_count(); ++i) {
    columns.emplace_back(root->field(i)->name(), root->field(i)->field_id());
  }
  return columns;
}

std::string PhysicalNameOf(const DeltaTable& table, const std::string& column) {
  return PhysicalName(*table.state().schema()->GetFieldByName(column));
}

TEST(ColumnMappingNames, SpacesAndSparksReservedCharactersNeedIt) {
  for (const char* name : {"Qty (kg)", "a b", "a,b", "a;b", "a{b", "a}b", "a=b", "a\tb", "a\nb"}) {
    EXPECT_TRUE(NameNeedsColumnMapping(name)) << name;
  }
  for (const char* name : {"qty_kg", "Qty-kg", "Grösse", "a.b", "$x", "__$start_lsn"}) {
    EXPECT_FALSE(NameNeedsColumnMapping(name)) << name;
  }
}

TEST(ColumnMappingCreate, ANameThatNeedsItTurnsItOnWithIdsAndPhysicalNames) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), KeyQtyOptions());
  const auto& snapshot = table.state();
  EXPECT_EQ(snapshot.metadata.configuration.at("delta.columnMapping.mode"), "name");
  EXPECT_EQ(snapshot.metadata.configuration.at("delta.columnMapping.maxColumnId"), "2");
  EXPECT_EQ(snapshot.protocol, (Protocol{2, 5, {}, {}}));
  auto schema = snapshot.schema();
  std::set<std::string> physical;
  for (const auto& field : schema->fields()) {
    ASSERT_TRUE(field->metadata());
    EXPECT_TRUE(field->metadata()->Contains("delta.columnMapping.id"));
    EXPECT_EQ(PhysicalName(*field).rfind("col-", 0), 0u) << field->name();
    physical.insert(PhysicalName(*field));
  }
  EXPECT_EQ(physical.size(), 2u);
  // The schemaString carries the id as a number, as Spark writes it.
  auto metadata = ActionsNamed(dir.Log(Commit(0)), "metaData").at(0);
  auto fields = nlohmann::json::parse(metadata["schemaString"].get<std::string>())["fields"];
  EXPECT_TRUE(fields[1]["metadata"]["delta.columnMapping.id"].is_number_integer());
  EXPECT_EQ(fields[1]["name"], "Qty (kg)");
}

TEST(ColumnMappingCreate, PlainNamesLeaveTheTableWithoutMapping) {
  TempTableDir plain_dir;
  CreateOptions plain;
  plain.schema = KeyQtyBatch(0, 0, "qty")->schema();
  auto plain_table = DeltaTable::Create(plain_dir.path(), plain);
  EXPECT_EQ(plain_table.state().metadata.configuration.count("delta.columnMapping.mode"), 0u);
  EXPECT_EQ(plain_table.state().protocol, (Protocol{1, 2, {}, {}}));
}

TEST(ColumnMappingCreate, ModeNoneGivenForANameThatNeedsItIsRefusedBeforeWriting) {
  TempTableDir dir;
  try {
    DeltaTable::Create(dir.path(), KeyQtyOptions({{"delta.columnMapping.mode", "none"}}));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'Qty (kg)'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/_delta_log"));
  EXPECT_THROW(DeltaTable::Create(dir.path(), KeyQtyOptions({{"delta.columnMapping.mode", "id"}})),
               ConfigError);
}

TEST(ColumnMappingWrite, DataFilesAndStatsUsePhysicalNamesAndReadsUseLogicalOnes) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), KeyQtyOptions());
  table.Append({KeyQtyBatch(0, 10)});
  table.Append({KeyQtyBatch(10, 10)});
  const std::string qty = PhysicalNameOf(table, "Qty (kg)");
  const std::string id = PhysicalNameOf(table, "id");

  auto adds = ActionsNamed(dir.Log(Commit(1)), "add");
  ASSERT_EQ(adds.size(), 1u);
  auto columns = ParquetColumns(dir.File(adds[0]["path"].get<std::string>()));
  EXPECT_EQ(columns, (std::vector<std::pair<std::string, int>>{{id, 1}, {qty, 2}}));
  auto stats = nlohmann::json::parse(adds[0]["stats"].get<std::string>());
  EXPECT_EQ(stats["maxValues"][qty], 4.5);
  EXPECT_FALSE(stats["maxValues"].contains("Qty (kg)"));

  auto reopened = DeltaTable::Open(dir.path());
  auto rows = reopened.Read();
  EXPECT_EQ(rows->num_rows(), 20);
  EXPECT_EQ(rows->schema()->field(1)->name(), "Qty (kg)");
  EXPECT_EQ(SumInt64(rows, "id"), 190);
  // The filter's stats are found under the physical name: the first file is skipped.
  auto filtered = reopened.Read({{"Qty (kg)", ">=", "5"}});
  EXPECT_EQ(filtered->num_rows(), 10);

  std::int64_t scanned = 0;
  reopened.ScanFiles(*reopened.FilesAddedBy(2), {"Qty (kg)"}, [&](const arrow::RecordBatch& batch) {
    scanned += batch.num_rows();
    EXPECT_EQ(batch.column(0)->null_count(), 0);
  });
  EXPECT_EQ(scanned, 10);
}

TEST(ColumnMappingWrite, ANewColumnGetsTheNextIdAndOldRowsReadNull) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), KeyQtyOptions());
  table.Append({KeyQtyBatch(0, 3)});

  arrow::StringBuilder units;
  ASSERT_TRUE(units.AppendValues({"kg", "kg"}).ok());
  auto base = KeyQtyBatch(3, 2);
  auto wider = *base->AddColumn(2, arrow::field("Unit price", arrow::utf8()), *units.Finish());
  table.Append({wider});

  auto reopened = DeltaTable::Open(dir.path());
  const auto& snapshot = reopened.state();
  EXPECT_EQ(snapshot.metadata.configuration.at("delta.columnMapping.maxColumnId"), "3");
  auto field = snapshot.schema()->GetFieldByName("Unit price");
  ASSERT_TRUE(field);
  EXPECT_EQ(field->metadata()->Get("delta.columnMapping.id").ValueOrDie(), "3");
  auto rows = reopened.Read();
  EXPECT_EQ(rows->num_rows(), 5);
  EXPECT_EQ(rows->GetColumnByName("Unit price")->null_count(), 3);
}

TEST(ColumnMappingWrite, ATableWithoutMappingRefusesSuchAColumnWithTheAlterAndWritesNothing) {
  TempTableDir dir;
  CreateOptions plain;
  plain.schema = KeyQtyBatch(0, 0, "qty")->schema();
  auto table = DeltaTable::Create(dir.path(), plain);
  table.Append({KeyQtyBatch(0, 3, "qty")});
  const int files_before = CountFilesEndingWith(dir.path(), ".parquet");

  auto base = KeyQtyBatch(3, 2, "qty");
  auto wider = *base->AddColumn(2, arrow::field("Unit price", arrow::float64()),
                                *arrow::MakeArrayOfNull(arrow::float64(), 2));
  try {
    table.Append({wider});
    FAIL() << "expected SchemaChangedError";
  } catch (const SchemaChangedError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'Unit price'"), std::string::npos) << message;
    EXPECT_NE(message.find("ALTER TABLE delta.`" + dir.path() +
                           "` SET TBLPROPERTIES ('delta.columnMapping.mode'='name', "
                           "'delta.minReaderVersion'='2', 'delta.minWriterVersion'='5')"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(DeltaTable::Open(dir.path()).state().version, 1);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), files_before);
}

TEST(ColumnMappingPhysicalSchema, UnmappedSchemasAreUntouched) {
  auto schema = KeyQtyBatch(0, 0, "qty")->schema();
  EXPECT_EQ(PhysicalSchema(schema), schema);
  StringMap configuration = {{"delta.columnMapping.mode", "name"}};
  auto mapped = MapNewColumns(*schema, configuration, "t");
  auto physical = PhysicalSchema(mapped);
  EXPECT_NE(physical->field(0)->name(), "id");
  EXPECT_EQ(physical->field(1)->metadata()->Get("PARQUET:field_id").ValueOrDie(), "2");
  // Columns already mapped keep their ids and names.
  auto again = MapNewColumns(*mapped, configuration, "t");
  EXPECT_EQ(PhysicalName(*again->field(0)), PhysicalName(*mapped->field(0)));
  EXPECT_EQ(configuration.at("delta.columnMapping.maxColumnId"), "2");
}

}  // namespace
}  // namespace mssql_cdc::delta
