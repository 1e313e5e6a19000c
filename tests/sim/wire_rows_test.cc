#include "sim/wire_rows.h"

#include <gtest/gtest.h>

#include "sim/database.h"
#include "sim/storage.h"
#include "sim/transaction.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

constexpr std::int64_t kMinute = 60'000'000;

class WireRowsTest : public ::testing::Test {
 protected:
  std::unique_ptr<SimDatabase> Make(bool wire_rows) {
    CreateOptions options;
    options.clock = ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-01-01 00:00:00")};
    options.wire_rows = wire_rows;
    auto db = SimDatabase::Create(dir_.File(wire_rows ? "wire.db" : "plain.db"), options);
    TableDef t;
    t.name = items_;
    for (const char* c : {"id int not null", "name varchar(20)", "price decimal(10,2)",
                          "notes nvarchar(max)"}) {
      t.columns.push_back(ParseColumnDeclaration(c));
    }
    t.primary_key = {"id"};
    db->CreateTable(t);
    db->EnableCdc(items_);
    for (int i = 1; i <= 3; ++i) {
      auto txn = db->Begin();
      txn->Insert(items_, {{"id", i}, {"name", "n" + std::to_string(i)}, {"price", "1.50"}});
      txn->Commit();
      db->AdvanceClock(10 * kMinute);
    }
    auto txn = db->Begin();
    txn->Update(items_, {{"id", 1}}, {{"notes", "longer text"}});
    txn->Delete(items_, {{"id", 2}});
    txn->Commit();
    return db;
  }

  // The keys of the rows of `table`, in the order change reads ask for.
  std::vector<std::string> Keys(const std::string& table) {
    SqliteDb db(dir_.File("wire.db"), SqliteDb::Mode::kReadOnly);
    Statement st(db, "SELECT hex(\"__$start_lsn\") || '/' || \"__$command_id\" || '/' || "
                     "hex(\"__$seqval\") || '/' || \"__$operation\" FROM " + QuoteIdent(table) +
                     " ORDER BY \"__$start_lsn\", \"__$command_id\", \"__$seqval\", "
                     "\"__$operation\"");
    std::vector<std::string> keys;
    while (st.Step()) keys.push_back(st.Text(0));
    return keys;
  }

  bool TableExists(SimDatabase& db, const std::string& table) {
    SqliteDb raw(db.path(), SqliteDb::Mode::kReadOnly);
    Statement st(raw, "SELECT 1 FROM sqlite_master WHERE name = ?");
    st.BindText(1, table);
    return st.Step();
  }

  TempDir dir_;
  TableName items_ = ParseTableName("dbo.items");
};

TEST_F(WireRowsTest, EveryChangeRowHasAWireRowWithItsKey) {
  auto db = Make(true);
  const auto keys = Keys(ChangeTableStorageName("dbo_items"));
  ASSERT_EQ(keys.size(), 6u);  // three inserts, an update's two images, a delete
  EXPECT_EQ(Keys(WireTableStorageName("dbo_items")), keys);
}

TEST_F(WireRowsTest, TheValuesAreTheCapturedColumnsAsTheServerEncodesThem) {
  auto db = Make(true);
  const auto rows = db->ChangeRows("dbo_items");
  SqliteDb raw(db->path(), SqliteDb::Mode::kReadOnly);
  Statement st(raw, "SELECT \"__$values\" FROM " +
                        QuoteIdent(WireTableStorageName("dbo_items")) +
                        " ORDER BY \"__$start_lsn\", \"__$command_id\", \"__$seqval\", "
                        "\"__$operation\"");
  tds::EncodedValuesWriter expected(WireColumns(db->catalog().LoadInstance("dbo_items")));
  for (const ChangeRow& row : rows) {
    ASSERT_TRUE(st.Step());
    expected.Clear();
    for (const Value& value : row.values) PutValue(value, expected);
    expected.EndRow();
    EXPECT_EQ(st.Blob(0), std::string(expected.row()));
  }
  EXPECT_FALSE(st.Step());
}

TEST_F(WireRowsTest, CleanupAndDisablingRemoveThemWithTheChangeRows) {
  auto db = Make(true);
  // Commits at minutes 0, 10, 20 and 30: keeping 15 minutes keeps the third insert and after.
  db->Cleanup(15);
  const auto keys = Keys(ChangeTableStorageName("dbo_items"));
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(Keys(WireTableStorageName("dbo_items")), keys);
  db->DisableCdc("dbo_items");
  EXPECT_FALSE(TableExists(*db, WireTableStorageName("dbo_items")));
}

TEST_F(WireRowsTest, AWideTablesWireRowsShareItsChangeTablesLayout) {
  auto db = Make(true);
  EXPECT_FALSE(TableExists(*db, WireTableStorageName("dbo_items") + "_order"));  // clustered
  TableDef wide;
  wide.name = ParseTableName("dbo.wide");
  for (const char* c : {"id int not null", "a nvarchar(400)", "b varchar(800)"}) {
    wide.columns.push_back(ParseColumnDeclaration(c));
  }
  wide.primary_key = {"id"};
  db->CreateTable(wide);
  db->EnableCdc(wide.name);
  auto txn = db->Begin();
  txn->Insert(wide.name, {{"id", 2}, {"a", std::string(400, 'a')}, {"b", std::string(800, 'b')}});
  txn->Insert(wide.name, {{"id", 1}, {"a", "short"}});
  txn->Commit();
  EXPECT_TRUE(TableExists(*db, ChangeTableIndexName("dbo_wide")));
  EXPECT_TRUE(TableExists(*db, WireTableStorageName("dbo_wide") + "_order"));
  const auto keys = Keys(ChangeTableStorageName("dbo_wide"));
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(Keys(WireTableStorageName("dbo_wide")), keys);
}

TEST_F(WireRowsTest, AFileMadeWithoutThemHasNone) {
  auto db = Make(false);
  EXPECT_EQ(db->ChangeRows("dbo_items").size(), 6u);
  EXPECT_FALSE(TableExists(*db, WireTableStorageName("dbo_items")));
  SqliteDb raw(db->path(), SqliteDb::Mode::kReadOnly);
  EXPECT_FALSE(KeepsWireRows(raw));
}

}  // namespace
}  // namespace mssql_cdc::sim
