// Snapshot reads of the sim backend: current rows by key range, in key order, as operation-0
// rows stamped with the snapshot LSN.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "read_helpers.h"
#include "sim_fixture.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;  // mssql_cdc::testing: sim_fixture.h, read_helpers.h
using json = nlohmann::json;

// sales.items keyed by (order_id, line), declared line first so that key order differs from
// column order; dbo.customers keyed by id.
class SimSnapshotReadTest : public ::testing::Test {
 protected:
  SimSnapshotReadTest() : db_(dir_.File("cdc.db")) {
    const auto items = db_.AddTable(
        "sales", "items", {{"line", "int", 2}, {"order_id", "int", 1}, {"sku", "varchar(10)"}, {"qty", "int"}});
    db_.EnableCdc("sales_items", items, L(10));
    for (auto [order, line] : std::vector<std::pair<int, int>>{{2, 2}, {1, 1}, {3, 1}, {2, 1}, {1, 2}}) {
      db_.AddRow("sales", "items", {std::int64_t{line}, std::int64_t{order},
                                    "s" + std::to_string(order) + std::to_string(line),
                                    std::int64_t{order * 10 + line}});
    }
    const auto customers = db_.AddTable("dbo", "customers", {{"id", "int", 1}, {"name", "nvarchar(20)"}});
    db_.EnableCdc("dbo_customers", customers, L(10));
    for (int id : {5, 1, 4, 2, 3}) db_.AddRow("dbo", "customers", {std::int64_t{id}, "c" + std::to_string(id)});
  }

  std::shared_ptr<arrow::RecordBatch> Read(const std::string& ci, json lo, json hi,
                                           std::int64_t batch_rows = 10'000) {
    SnapshotReadRequest request;
    request.capture_instance = ci;
    request.lo = std::move(lo);
    request.hi = std::move(hi);
    request.snapshot_lsn = L(0x1234);
    request.snapshot_commit_ts = UtcMicros{*ParseDateTime("2024-03-01 12:00:00.123")};
    request.batch_rows = batch_rows;
    auto reader = OpenSimSource(db_.path())->ReadSnapshot(request);
    return ReadAll(*reader);
  }

  static std::vector<std::string> Keys(const arrow::RecordBatch& batch) { return Strings(batch, "sku"); }

  TempDir dir_;
  SimFixture db_;
};

TEST_F(SimSnapshotReadTest, WholeTableInKeyOrderAsOperationZeroRows) {
  const auto batch = Read("sales_items", nullptr, nullptr, /*batch_rows=*/2);
  EXPECT_EQ(batch->schema()->ToString(),
            "_capture_instance: string\n_start_lsn: string\n_seqval: string\n"
            "_operation: int32\n_command_id: int32\n_commit_ts: timestamp[us]\n"
            "line: int32\norder_id: int32\nsku: string\nqty: int32");
  EXPECT_THAT(Keys(*batch), ElementsAre("s11", "s12", "s21", "s22", "s31"));
  EXPECT_THAT(Ints<arrow::Int32Array>(*batch, "qty"), ElementsAre(11, 12, 21, 22, 31));
  EXPECT_THAT(Strings(*batch, "_capture_instance"), ::testing::Each("sales_items"));
  EXPECT_THAT(Strings(*batch, "_start_lsn"), ::testing::Each("0x00000000000000001234"));
  EXPECT_THAT(Strings(*batch, "_seqval"), ::testing::Each("NULL"));
  EXPECT_THAT(Ints<arrow::Int32Array>(*batch, "_operation"), ::testing::Each(0));
  EXPECT_EQ(batch->GetColumnByName("_command_id")->null_count(), 5);
  EXPECT_THAT(Ints<arrow::TimestampArray>(*batch, "_commit_ts"),
              ::testing::Each(*ParseDateTime("2024-03-01 12:00:00.123")));
}

TEST_F(SimSnapshotReadTest, CompositeKeyRangeLowInclusiveHighExclusive) {
  EXPECT_THAT(Keys(*Read("sales_items", json::array({1, 2}), json::array({2, 2}))),
              ElementsAre("s12", "s21"));
  EXPECT_THAT(Keys(*Read("sales_items", nullptr, json::array({2, 1}))), ElementsAre("s11", "s12"));
  EXPECT_THAT(Keys(*Read("sales_items", json::array({2, 2}), nullptr)), ElementsAre("s22", "s31"));
  EXPECT_THAT(Keys(*Read("sales_items", json::array({1, 3}), json::array({3, 0}))),
              ElementsAre("s21", "s22"));
  EXPECT_EQ(Read("sales_items", json::array({2, 2}), json::array({2, 2}))->num_rows(), 0);
}

TEST_F(SimSnapshotReadTest, SingleColumnKeyRangeAndOpenEnds) {
  EXPECT_THAT(Strings(*Read("dbo_customers", 2, 4), "name"), ElementsAre("c2", "c3"));
  EXPECT_THAT(Strings(*Read("dbo_customers", nullptr, 3), "name"), ElementsAre("c1", "c2"));
  EXPECT_THAT(Strings(*Read("dbo_customers", 4, nullptr), "name"), ElementsAre("c4", "c5"));
  EXPECT_THAT(Strings(*Read("dbo_customers", json::array({4}), nullptr), "name"), ElementsAre("c4", "c5"));
  EXPECT_EQ(Read("dbo_customers", 6, nullptr)->num_rows(), 0);
}

TEST_F(SimSnapshotReadTest, DroppedColumnReadsNull) {
  db_.Exec("ALTER TABLE \"sales.items\" DROP COLUMN qty");
  db_.Exec("DELETE FROM sim_columns WHERE name = 'qty'");
  const auto batch = Read("sales_items", nullptr, nullptr);
  ASSERT_EQ(batch->num_rows(), 5);
  EXPECT_EQ(batch->GetColumnByName("qty")->null_count(), 5);
  EXPECT_THAT(Keys(*batch), ElementsAre("s11", "s12", "s21", "s22", "s31"));
}

TEST_F(SimSnapshotReadTest, ChosenColumnsAndKeyColumns) {
  SnapshotReadRequest request;
  request.capture_instance = "SALES_ITEMS";
  request.columns = {"sku"};
  request.key_columns = {"SKU"};
  request.lo = "s20";
  auto reader = OpenSimSource(db_.path())->ReadSnapshot(request);
  const auto batch = ReadAll(*reader);
  EXPECT_EQ(batch->num_columns(), 7);
  EXPECT_THAT(Strings(*batch, "sku"), ElementsAre("s21", "s22", "s31"));
  // The name as configured.
  EXPECT_THAT(Strings(*batch, "_capture_instance"), ::testing::Each("SALES_ITEMS"));
}

TEST_F(SimSnapshotReadTest, BoundsThatDoNotFitTheKeyAreRefused) {
  auto source = OpenSimSource(db_.path());
  SnapshotReadRequest request;
  request.capture_instance = "sales_items";
  request.lo = 1;  // a scalar for a two-column key
  EXPECT_THROW(source->ReadSnapshot(request), ConfigError);
  request.lo = json::array({1, 2, 3});
  EXPECT_THROW(source->ReadSnapshot(request), ConfigError);
  request.lo = json::array({1, nullptr});
  EXPECT_THROW(source->ReadSnapshot(request), ConfigError);
  request.lo = nullptr;
  request.key_columns = {"nope"};
  try {
    source->ReadSnapshot(request);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("key column 'nope' is not a column of table sales.items"));
  }
  request.capture_instance = "dbo_customers";
  request.key_columns = {};
  request.lo = json::array({1, 2});
  EXPECT_THROW(source->ReadSnapshot(request), ConfigError);
  request.lo = json::object({{"id", 1}});
  EXPECT_THROW(source->ReadSnapshot(request), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc
