// DeltaTable::Compact against writers that commit while it rewrites: appends leave its work
// valid, a removal of one of its files makes it plan again.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "delta/table.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

constexpr std::int64_t kTargetBytes = 256LL * 1024 * 1024;

// A table of three small files (versions 1 to 3) of 300,000 rows each.
DeltaTable ThreeSmallFiles(const std::string& root) {
  CreateOptions options;
  options.schema = IdNameSchema();
  auto table = DeltaTable::Create(root, options);
  for (int i = 0; i < 3; ++i) table.Append({BigBatch(i * 300'000)});
  return table;
}

// The add action of a file another table wrote, the file copied into `root` first: what a
// stream appending to `root` would commit.
std::string AppendedElsewhere(const std::string& root, const std::string& scratch) {
  CreateOptions options;
  options.schema = IdNameSchema();
  DeltaTable::Create(scratch, options).Append({IdNameBatch(900'000, 5)});
  auto add = ActionsNamed(scratch + "/_delta_log/" + Commit(1), "add").at(0);
  std::filesystem::copy_file(scratch + "/" + add["path"].get<std::string>(),
                             root + "/" + add["path"].get<std::string>());
  return nlohmann::json({{"add", add}}).dump() + "\n";
}

TEST(DeltaTableCompaction, CommitsAsWrittenAfterLosingToAnAppend) {
  TempTableDir dir, scratch;
  auto table = ThreeSmallFiles(dir.path());
  const std::string appended = AppendedElsewhere(dir.path(), scratch.path());
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(4)),
      R"({"commitInfo":{"timestamp":1,"operation":"WRITE","isBlindAppend":true}})" "\n" + appended);
  auto result = table.Compact(kTargetBytes);
  ASSERT_TRUE(winner.get());
  EXPECT_EQ(result.version, 5);
  EXPECT_EQ(result.attempts, 2);
  // Committed from the snapshot it read: the rows were not read and written a second time.
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(5)), "commitInfo").at(0)["readVersion"], 3);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(5)), "remove").size(), 3u);
  auto reopened = DeltaTable::Open(dir.path());
  EXPECT_EQ(reopened.state().files.size(), 2u);  // the compacted file and the append's
  EXPECT_EQ(reopened.Read()->num_rows(), 900'005);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 5);  // three old, one compacted, one appended
}

TEST(DeltaTableCompaction, PlansAgainWhenAWinnerRemovedOneOfItsFiles) {
  TempTableDir dir;
  auto table = ThreeSmallFiles(dir.path());
  const AddFile gone = table.state().files.begin()->second;
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(4)),
      R"({"commitInfo":{"timestamp":1,"operation":"DELETE"}})" "\n" +
          nlohmann::json({{"remove", {{"path", gone.path}, {"dataChange", true}, {"deletionTimestamp", 1}}}})
              .dump() + "\n");
  auto result = table.Compact(kTargetBytes);
  ASSERT_TRUE(winner.get());
  EXPECT_EQ(result.version, 5);
  EXPECT_EQ(result.attempts, 2);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(5)), "commitInfo").at(0)["readVersion"], 4);
  const auto removes = ActionsNamed(dir.Log(Commit(5)), "remove");
  ASSERT_EQ(removes.size(), 2u);
  for (const auto& remove : removes) EXPECT_NE(remove["path"], gone.path);
  // The deleted file's rows stay deleted; the first try's file is gone.
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 600'000);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 4);
}

}  // namespace
}  // namespace mssql_cdc::delta
