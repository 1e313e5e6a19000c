// The sim backend's split points are what the reference's T-SQL answers (NTILE over the rows
// in LSN order, then per tile its last LSN and its size), checked against SQLite's own NTILE on
// commits of every size, some straddling tiles.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>

#include "sim/database.h"
#include "sim/storage.h"
#include "sim/transaction.h"
#include "source/sim/sim_source.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

std::vector<SplitPoint> ByNtile(const std::string& path, const std::string& ci, const Lsn& from,
                                const Lsn& to, int n) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const std::string sql =
      "SELECT MAX(s), COUNT(*) FROM (SELECT \"__$start_lsn\" AS s, NTILE(" + std::to_string(n) +
      ") OVER (ORDER BY \"__$start_lsn\") AS g FROM \"" + sim::ChangeTableStorageName(ci) +
      "\" WHERE \"__$start_lsn\" BETWEEN ?1 AND ?2) GROUP BY g ORDER BY 1";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_blob(st, 1, from.data(), Lsn::kSize, SQLITE_STATIC);
  sqlite3_bind_blob(st, 2, to.data(), Lsn::kSize, SQLITE_STATIC);
  std::vector<SplitPoint> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const Lsn bound = Lsn::FromBytes(sqlite3_column_blob(st, 0), Lsn::kSize);
    out.push_back(SplitPoint{bound, bound.Increment(), sqlite3_column_int64(st, 1)});
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(SimSplitPoints, AreWhatNtileAnswersForCommitsOfEverySize) {
  testing::TempDir dir;
  const std::string path = dir.File("split.sim");
  std::vector<Lsn> commits;
  std::string ci;
  {
    auto db = sim::SimDatabase::Create(path);
    sim::TableDef table;
    table.name = sim::TableName{"dbo", "t"};
    table.columns = {sim::ParseColumnDeclaration("id int not null")};
    table.primary_key = {"id"};
    db->CreateTable(table);
    ci = db->EnableCdc(table.name);
    std::mt19937 random(11);
    int id = 0;
    for (int c = 0; c < 60; ++c) {
      const int size = c % 9 == 0 ? 40 : 1 + static_cast<int>(random() % 7);
      std::vector<sim::Row> rows;
      for (int r = 0; r < size; ++r) rows.push_back({{"id", ++id}});
      auto txn = db->Begin();
      txn->InsertMany(table.name, std::move(rows));
      commits.push_back(*txn->Commit().commit_lsn);
    }
  }
  auto source = OpenSimSource(path);
  const std::vector<std::pair<Lsn, Lsn>> ranges = {
      {Lsn(), commits.back()}, {commits[3], commits[40]}, {commits[9], commits[9]},
      {commits.back().Increment(), commits.back().Increment()}};
  for (const auto& [from, to] : ranges) {
    for (int n : {1, 2, 3, 5, 8, 500}) {
      const auto expected = ByNtile(path, ci, from, to, n);
      const auto actual = source->SplitPoints(ci, from, to, n);
      ASSERT_EQ(actual.size(), expected.size()) << n;
      for (std::size_t i = 0; i < actual.size(); ++i) {
        EXPECT_EQ(actual[i].bound, expected[i].bound) << n << " tile " << i;
        EXPECT_EQ(actual[i].rows, expected[i].rows) << n << " tile " << i;
        EXPECT_EQ(actual[i].next, expected[i].next);
      }
    }
  }
}

}  // namespace
}  // namespace mssql_cdc
