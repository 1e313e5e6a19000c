// Metadata of the sim backend: capture instances, columns, DDL, LSNs and commits, split points,
// and opening files that are not sim databases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/errors.h"
#include "source/sim/sim_source.h"
#include "sim_fixture.h"

namespace mssql_cdc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;  // mssql_cdc::testing: sim_fixture.h, read_helpers.h

LocalMicros Local(const std::string& text) { return LocalMicros{*ParseDateTime(text)}; }

std::vector<std::string> Files(const TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename F>
std::string MessageOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.class_name()) + ": " + e.what();
  }
  return "no error";
}

// orders(id, customer, total) and items(line, order_id, sku) whose key is (order_id, line).
class SimSourceMetadataTest : public ::testing::Test {
 protected:
  SimSourceMetadataTest() : db_(dir_.File("cdc.db"), "Pacific Standard Time") {
    orders_ = db_.AddTable("dbo", "orders", {{"id", "int", 1}, {"customer", "nvarchar(50)"},
                                             {"total", "decimal(18,2)"}});
    items_ = db_.AddTable("sales", "items", {{"line", "int", 2}, {"order_id", "bigint", 1},
                                             {"sku", "varchar(20)"}, {"qty", "smallint"}});
    orders_ci_ = db_.EnableCdc("dbo_orders", orders_, L(10), {}, "2024-01-01 00:00:00.000");
    db_.EnableCdc("sales_items", items_, L(10), {"line", "order_id", "qty"},
                  "2024-01-02 00:00:00.000");
  }
  std::unique_ptr<Source> Open() { return OpenSimSource(db_.path()); }

  TempDir dir_;
  SimFixture db_;
  std::int64_t orders_ = 0;
  std::int64_t items_ = 0;
  std::int64_t orders_ci_ = 0;
};

TEST_F(SimSourceMetadataTest, ListsCaptureInstancesWithKeysInIndexOrder) {
  db_.EnableCdc("dbo_orders_v2", orders_, L(40), {}, "2024-02-01 00:00:00.000");
  const auto instances = Open()->ListCaptureInstances();
  ASSERT_EQ(instances.size(), 3u);
  EXPECT_EQ(instances[0].name, "dbo_orders");
  EXPECT_EQ(instances[0].source_schema, "dbo");
  EXPECT_EQ(instances[0].source_table, "orders");
  EXPECT_EQ(instances[0].start_lsn, L(10));
  EXPECT_EQ(instances[0].create_date, Local("2024-01-01 00:00:00"));
  EXPECT_THAT(instances[0].index_columns, ElementsAre("id"));
  EXPECT_EQ(instances[1].name, "dbo_orders_v2");  // same table, created later
  EXPECT_EQ(instances[1].start_lsn, L(40));
  EXPECT_EQ(instances[2].name, "sales_items");
  EXPECT_THAT(instances[2].index_columns, ElementsAre("order_id", "line"));
}

TEST_F(SimSourceMetadataTest, CapturedColumnsInOrdinalOrderWithTypes) {
  const auto columns = Open()->CapturedColumns("sales_items");
  ASSERT_EQ(columns.size(), 3u);  // sku is not captured
  EXPECT_EQ(columns[0].name, "line");
  EXPECT_EQ(columns[0].column_ordinal, 1);
  EXPECT_EQ(columns[0].column_id, 1);
  EXPECT_EQ(columns[0].type, SqlType::Parse("int"));
  EXPECT_EQ(columns[1].name, "order_id");
  EXPECT_EQ(columns[1].column_id, 2);
  EXPECT_EQ(columns[1].type, SqlType::Parse("bigint"));
  EXPECT_EQ(columns[2].name, "qty");
  EXPECT_EQ(columns[2].column_ordinal, 3);
  EXPECT_EQ(columns[2].column_id, 4);
  EXPECT_EQ(columns[2].type, SqlType::Parse("smallint"));
  const auto orders = Open()->CapturedColumns("dbo_orders");
  ASSERT_EQ(orders.size(), 3u);
  EXPECT_EQ(orders[2].type, SqlType::Parse("decimal(18,2)"));
}

TEST_F(SimSourceMetadataTest, ResolvesExactNameThenIgnoringCase) {
  auto source = Open();
  EXPECT_EQ(source->ResolveCaptureInstance("dbo_orders").name, "dbo_orders");
  EXPECT_EQ(source->ResolveCaptureInstance("DBO_Orders").name, "dbo_orders");
  EXPECT_EQ(source->CapturedColumns("SALES_ITEMS").size(), 3u);
}

TEST_F(SimSourceMetadataTest, UnknownInstanceListsThoseThereAreAndHowToListThem) {
  auto source = Open();
  const std::string message = MessageOf([&] { source->ResolveCaptureInstance("dbo_order"); });
  EXPECT_THAT(message, HasSubstr("NotFoundError"));
  EXPECT_THAT(message, HasSubstr("'dbo_order' does not exist"));
  EXPECT_THAT(message, HasSubstr("dbo_orders, sales_items"));
  EXPECT_THAT(message, HasSubstr("mssql-cdc sim info --db " + db_.path()));
  EXPECT_THROW(source->CapturedColumns("nope"), NotFoundError);
  EXPECT_THROW(source->SplitPoints("nope", L(1), L(2), 2), NotFoundError);
  EXPECT_THROW(source->DdlHistory("nope"), NotFoundError);
}

TEST_F(SimSourceMetadataTest, MinLsnPerInstanceAndZeroWhenUnknown) {
  db_.EnableCdc("dbo_orders_v2", orders_, L(40));
  auto source = Open();
  EXPECT_EQ(source->MinLsn("dbo_orders"), L(10));
  EXPECT_EQ(source->MinLsn("dbo_orders_v2"), L(40));
  EXPECT_EQ(source->MinLsn("Dbo_Orders_V2"), L(40));
  EXPECT_TRUE(source->MinLsn("missing").IsZero());
  // Cleanup raises the low end.
  db_.Run("UPDATE cdc_change_tables SET start_lsn = ?1 WHERE capture_instance = 'dbo_orders'",
          {SimFixture::LsnBlob(L(25))});
  EXPECT_EQ(source->MinLsn("dbo_orders"), L(25));
}

TEST_F(SimSourceMetadataTest, MaxLsnIsTheLastMappingEntryIdleOnesIncluded) {
  auto source = Open();
  EXPECT_EQ(source->MaxLsn(), std::nullopt);
  db_.AddCommit(L(10), "2024-03-01 10:00:00.000");
  db_.AddCommit(L(0x1'0000'0000ULL), "2024-03-01 10:00:01.000");
  EXPECT_EQ(source->MaxLsn(), L(0x1'0000'0000ULL));
  db_.AddCommit(L(0x1'0000'0005ULL), "2024-03-01 10:05:00.000", /*idle=*/true);
  EXPECT_EQ(source->MaxLsn(), L(0x1'0000'0005ULL));  // sees the writer's later commits
}

TEST_F(SimSourceMetadataTest, NthCommitAfterCountsIdleEntries) {
  db_.AddCommit(L(10), "2024-03-01 10:00:00.000");
  db_.AddCommit(L(20), "2024-03-01 10:01:00.000", /*idle=*/true);
  db_.AddCommit(L(30), "2024-03-01 10:02:00.000");
  db_.AddCommit(L(40), "2024-03-01 10:03:00.000");
  auto source = Open();
  EXPECT_EQ(source->NthCommitAfter(Lsn(), 1), L(10));
  EXPECT_EQ(source->NthCommitAfter(Lsn(), 2), L(20));
  EXPECT_EQ(source->NthCommitAfter(L(10), 2), L(30));
  EXPECT_EQ(source->NthCommitAfter(L(15), 1), L(20));
  EXPECT_EQ(source->NthCommitAfter(L(10), 3), L(40));
  EXPECT_EQ(source->NthCommitAfter(L(10), 100), L(40));  // fewer follow: the last one
  EXPECT_EQ(source->NthCommitAfter(L(40), 1), std::nullopt);
  EXPECT_THROW(source->NthCommitAfter(L(10), 0), ConfigError);
}

TEST_F(SimSourceMetadataTest, CommitTimeExactAndAtOrBefore) {
  db_.AddCommit(L(10), "2024-03-01 10:00:00.003");
  db_.AddCommit(L(20), "2024-03-01 10:01:00.007", /*idle=*/true);
  db_.AddCommit(L(30), "2024-03-01 10:02:00.000");
  auto source = Open();
  EXPECT_EQ(source->CommitTime(L(30)), Local("2024-03-01 10:02:00"));
  EXPECT_EQ(source->CommitTime(L(20)), Local("2024-03-01 10:01:00.007"));
  EXPECT_EQ(source->CommitTime(L(25)), std::nullopt);
  EXPECT_EQ(source->CommitTimeAtOrBefore(L(25)), Local("2024-03-01 10:01:00.007"));
  EXPECT_EQ(source->CommitTimeAtOrBefore(L(30)), Local("2024-03-01 10:02:00"));
  EXPECT_EQ(source->CommitTimeAtOrBefore(L(1000)), Local("2024-03-01 10:02:00"));
  EXPECT_EQ(source->CommitTimeAtOrBefore(L(5)), std::nullopt);
}

TEST_F(SimSourceMetadataTest, SplitPointsAreNtileGroups) {
  // Rows per commit: L(10) x3, L(30) x2, L(40) x1, L(50) x4.
  int seq = 0;
  for (auto [lsn, count] : std::vector<std::pair<std::uint64_t, int>>{{10, 3}, {30, 2}, {40, 1}, {50, 4}}) {
    for (int i = 0; i < count; ++i) {
      db_.AddChange("dbo_orders", L(lsn), L(++seq), 2, i + 1, {std::int64_t{seq}, nullptr, nullptr});
    }
  }
  auto source = Open();
  auto two = source->SplitPoints("dbo_orders", L(0), L(100), 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].bound, L(30));
  EXPECT_EQ(two[0].next, L(31));
  EXPECT_EQ(two[0].rows, 5);
  EXPECT_EQ(two[1].bound, L(50));
  EXPECT_EQ(two[1].rows, 5);

  // Tiles of 4, 3, 3 rows: the last two both end inside commit L(50), reported as NTILE gives.
  auto three = source->SplitPoints("dbo_orders", L(0), L(100), 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].bound, L(30));
  EXPECT_EQ(three[0].rows, 4);
  EXPECT_EQ(three[1].bound, L(50));
  EXPECT_EQ(three[1].rows, 3);
  EXPECT_EQ(three[2].bound, L(50));
  EXPECT_EQ(three[2].rows, 3);

  // Bounds are inclusive; only rows of the range count.
  auto inner = source->SplitPoints("dbo_orders", L(30), L(40), 5);
  ASSERT_EQ(inner.size(), 3u);
  EXPECT_EQ(inner[0].bound, L(30));
  EXPECT_EQ(inner[1].bound, L(30));
  EXPECT_EQ(inner[2].bound, L(40));
  EXPECT_EQ(inner[2].next, L(41));
  std::int64_t total = 0;
  for (const auto& p : inner) total += p.rows;
  EXPECT_EQ(total, 3);

  EXPECT_TRUE(source->SplitPoints("dbo_orders", L(11), L(29), 4).empty());
  EXPECT_THROW(source->SplitPoints("dbo_orders", L(0), L(100), 0), ConfigError);
}

TEST_F(SimSourceMetadataTest, DdlHistoryOfTheInstanceInLsnOrder) {
  const std::int64_t ci = orders_ci_;
  db_.Run("INSERT INTO cdc_ddl_history VALUES (?1, ?2, 0, ?3, ?4, ?5)",
          {orders_, ci, std::string("ALTER TABLE dbo.orders ADD note nvarchar(10)"),
           SimFixture::LsnBlob(L(70)), std::string("2024-03-02 00:00:00.000")});
  db_.Run("INSERT INTO cdc_ddl_history VALUES (?1, ?2, 1, ?3, ?4, ?5)",
          {orders_, ci, std::string("ALTER TABLE dbo.orders ALTER COLUMN total decimal(20,2)"),
           SimFixture::LsnBlob(L(60)), std::string("2024-03-01 00:00:00.000")});
  auto source = Open();
  const auto ddl = source->DdlHistory("dbo_orders");
  ASSERT_EQ(ddl.size(), 2u);
  EXPECT_EQ(ddl[0].ddl_lsn, L(60));
  EXPECT_THAT(ddl[0].ddl_command, HasSubstr("ALTER COLUMN total"));
  EXPECT_EQ(ddl[0].ddl_time, Local("2024-03-01 00:00:00"));
  EXPECT_EQ(ddl[1].ddl_lsn, L(70));
  EXPECT_TRUE(source->DdlHistory("sales_items").empty());
}

TEST_F(SimSourceMetadataTest, ServerTimeZoneFromSimMeta) {
  EXPECT_EQ(Open()->ServerTimeZone(), "Pacific Standard Time");
}

TEST(SimSourceOpenTest, MissingFileFailsAndCreatesNothing) {
  TempDir dir;
  const std::string path = dir.File("missing.db");
  const std::string message = MessageOf([&] { OpenSimSource(path); });
  EXPECT_THAT(message, HasSubstr("SourceError"));
  EXPECT_THAT(message, HasSubstr("does not exist"));
  EXPECT_THAT(message, HasSubstr("mssql-cdc sim create --db " + path));
  EXPECT_TRUE(Files(dir).empty());
}

TEST(SimSourceOpenTest, DirectoryIsNotADatabase) {
  TempDir dir;
  EXPECT_THAT(MessageOf([&] { OpenSimSource(dir.path()); }), HasSubstr("not a file"));
}

TEST(SimSourceOpenTest, TextFileIsNotASimDatabaseAndStaysAsItWas) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << "just some text, not SQLite at all\n";
  const std::string message = MessageOf([&] { OpenSimSource(path); });
  EXPECT_THAT(message, HasSubstr("SourceError"));
  EXPECT_THAT(message, HasSubstr("is not a mssql-cdc sim database"));
  EXPECT_THAT(message, HasSubstr("mssql-cdc sim create --db"));
  EXPECT_THAT(Files(dir), ElementsAre("notes.txt"));
  EXPECT_EQ(std::filesystem::file_size(path), 34u);
}

TEST(SimSourceOpenTest, OtherSqliteDatabaseIsNotASimDatabase) {
  TempDir dir;
  const std::string path = dir.File("other.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  EXPECT_THAT(MessageOf([&] { OpenSimSource(path); }), HasSubstr("is not a mssql-cdc sim database"));
  EXPECT_THAT(Files(dir), ElementsAre("other.db"));
}

TEST(SimSourceOpenTest, WrongFormatMarkerOrVersionIsRefused) {
  TempDir dir;
  {
    SimFixture db(dir.File("a.db"));
    db.SetMeta("format", "something-else");
    SimFixture db2(dir.File("b.db"));
    db2.SetMeta("format_version", "2");
    SimFixture db3(dir.File("c.db"));
    db3.Run("DELETE FROM sim_meta WHERE key = 'format_version'", {});
  }
  EXPECT_THAT(MessageOf([&] { OpenSimSource(dir.File("a.db")); }),
              HasSubstr("is not a mssql-cdc sim database"));
  const std::string message = MessageOf([&] { OpenSimSource(dir.File("b.db")); });
  EXPECT_THAT(message, HasSubstr("format version 2"));
  EXPECT_THAT(message, HasSubstr("reads version 1"));
  EXPECT_THAT(MessageOf([&] { OpenSimSource(dir.File("c.db")); }), HasSubstr("format version none"));
}

}  // namespace
}  // namespace mssql_cdc
