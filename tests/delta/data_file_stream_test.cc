// DataFileStream and staged appends: rows written as they arrive in bounded row groups, files
// that end near their target, files of failed writes deleted, and one commit naming them all.
#include "delta/data_file_stream.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <filesystem>

#include "core/errors.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "delta/table.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

// Rows of (id, name) with names long enough that a few thousand rows make a megabyte.
std::shared_ptr<arrow::RecordBatch> WideNames(std::int64_t first, std::int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (std::int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    // Distinct text per row, so that Parquet cannot shrink it to nothing.
    std::string name = "row-" + std::to_string(i * 7919 % 1000003) + "-";
    while (name.size() < 200) name += std::to_string(i * 31 + name.size());
    EXPECT_TRUE(names.Append(name).ok());
  }
  return arrow::RecordBatch::Make(IdNameSchema(), count, {*ids.Finish(), *names.Finish()});
}

std::unique_ptr<parquet::ParquetFileReader> OpenParquet(const std::string& path) {
  return parquet::ParquetFileReader::OpenFile(path);
}

std::vector<std::int64_t> IdsOf(const std::string& root, const std::vector<AddFile>& files) {
  std::vector<std::int64_t> ids;
  for (const auto& file : files) {
    auto reader = parquet::arrow::OpenFile(
        *arrow::io::ReadableFile::Open(root + "/" + file.path), arrow::default_memory_pool());
    std::shared_ptr<arrow::Table> table;
    EXPECT_TRUE((*reader)->ReadTable(&table).ok());
    for (const auto& chunk : table->GetColumnByName("id")->chunks()) {
      const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
      for (std::int64_t i = 0; i < values.length(); ++i) ids.push_back(values.Value(i));
    }
  }
  return ids;
}

TEST(DataFileStream, HoldsOneRowGroupAtATimeAndKeepsTheRowOrder) {
  TempTableDir dir;
  WriteOptions options;
  options.row_group_bytes = 256 << 10;
  DataFileStream stream(storage::LocalFileSystem(), dir.path(), IdNameSchema(), options, 3);
  std::int64_t most_held = 0;
  for (int b = 0; b < 100; ++b) {
    stream.Write(WideNames(b * 1000, 1000));
    most_held = std::max(most_held, stream.buffered_bytes());
  }
  // Never more than the row-group budget plus the batch that crossed it.
  EXPECT_LT(most_held, options.row_group_bytes + 2 * arrow::util::TotalBufferSize(*WideNames(0, 1000)));
  const auto files = stream.Finish();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path.rfind("part-00003-", 0), 0u);
  auto metadata = OpenParquet(dir.File(files[0].path))->metadata();
  EXPECT_EQ(metadata->num_rows(), 100'000);
  EXPECT_GE(metadata->num_row_groups(), 40);  // ~220 KB of Arrow per 1,000 rows
  std::vector<std::int64_t> expected(100'000);
  for (std::int64_t i = 0; i < 100'000; ++i) expected[i] = i;
  EXPECT_EQ(IdsOf(dir.path(), files), expected);
  EXPECT_NE(files[0].stats->find("\"numRecords\":100000"), std::string::npos);
}

TEST(DataFileStream, FilesEndNearTheTargetSize) {
  TempTableDir dir;
  WriteOptions options;
  options.target_file_bytes = 1 << 20;
  options.row_group_bytes = 4 << 20;  // larger than a file: the file's end sizes its row groups
  DataFileStream stream(storage::LocalFileSystem(), dir.path(), IdNameSchema(), options, 0);
  for (int b = 0; b < 60; ++b) stream.Write(WideNames(b * 1000, 1000));
  const auto files = stream.Finish();
  ASSERT_GE(files.size(), 3u);
  for (std::size_t i = 0; i + 1 < files.size(); ++i) {
    EXPECT_GE(files[i].size, options.target_file_bytes * 9 / 10) << files[i].path;
    EXPECT_LE(files[i].size, options.target_file_bytes * 13 / 10) << files[i].path;
    EXPECT_NE(files[i].path.find("-c" + std::string(i < 10 ? "00" : "0") + std::to_string(i) + "."),
              std::string::npos);
  }
  std::int64_t rows = 0;
  for (const auto& file : files) rows += OpenParquet(dir.File(file.path))->metadata()->num_rows();
  EXPECT_EQ(rows, 60'000);
}

TEST(DataFileStream, AStreamNotFinishedOrDiscardedLeavesNoFiles) {
  TempTableDir dir;
  WriteOptions options;
  options.row_group_bytes = 64 << 10;
  std::vector<std::string> told;
  options.on_file = [&](const std::string& path) { told.push_back(path); };
  {
    DataFileStream stream(storage::LocalFileSystem(), dir.path(), IdNameSchema(), options, 0);
    for (int b = 0; b < 5; ++b) stream.Write(WideNames(b * 1000, 1000));
    ASSERT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 1);
  }  // destroyed mid-write, as by an exception
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 0);
  ASSERT_EQ(told.size(), 1u);  // told before the file was created

  DataFileStream finished(storage::LocalFileSystem(), dir.path(), IdNameSchema(), options, 1);
  finished.Write(WideNames(0, 1000));
  EXPECT_EQ(finished.Finish().size(), 1u);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 1);
  finished.Discard();  // another part of the append failed: no commit will name it
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 0);
}

TEST(DataFileStream, BatchesAreAlignedToTheSchemaByName) {
  TempTableDir dir;
  auto schema = arrow::schema({arrow::field("name", arrow::utf8()), arrow::field("id", arrow::int64(), false),
                               arrow::field("added", arrow::int32())});
  DataFileStream stream(storage::LocalFileSystem(), dir.path(), schema, WriteOptions{}, 0);
  stream.Write(IdNameBatch(1, 3));
  const auto files = stream.Finish();
  auto reader = parquet::arrow::OpenFile(*arrow::io::ReadableFile::Open(dir.File(files[0].path)),
                                         arrow::default_memory_pool());
  std::shared_ptr<arrow::Table> table;
  ASSERT_TRUE((*reader)->ReadTable(&table).ok());
  EXPECT_EQ(table->schema()->field(0)->name(), "name");
  EXPECT_EQ(table->GetColumnByName("added")->null_count(), 3);
}

CreateOptions IdNameTable() {
  CreateOptions options;
  options.schema = IdNameSchema();
  return options;
}

TEST(DeltaTableStaged, OneCommitNamesTheFilesOfEveryStream) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameTable());
  AppendOptions options;
  options.txn = Txn{"app", 7, std::nullopt};
  options.write.row_group_bytes = 64 << 10;
  auto staged = table.StageAppend(IdNameSchema(), options);
  ASSERT_FALSE(staged.held_version());
  std::vector<AddFile> files;
  for (std::size_t part = 0; part < 3; ++part) {
    auto stream = staged.NewFileStream(part);
    stream->Write(IdNameBatch(static_cast<std::int64_t>(part) * 10, 10));
    auto done = stream->Finish();
    files.insert(files.end(), done.begin(), done.end());
  }
  staged.set_user_metadata(R"({"batch":7})");
  EXPECT_EQ(table.state().version, 0);  // nothing visible before the commit
  const auto result = table.CommitStaged(staged, files);
  EXPECT_TRUE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(result.rows, 30);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(1)), "add").size(), 3u);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(1)), "commitInfo")[0]["userMetadata"], R"({"batch":7})");
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 30);
  std::vector<std::string> added;
  const auto added_by_commit = table.FilesAddedBy(1);
  ASSERT_TRUE(added_by_commit);
  for (const auto& add : *added_by_commit) added.push_back(add.path);
  std::vector<std::string> given;
  for (const auto& add : files) given.push_back(add.path);
  EXPECT_EQ(added, given);
}

TEST(DeltaTableStaged, AHeldTxnCommitsNothingAndDeletesTheFiles) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameTable());
  AppendOptions options;
  options.txn = Txn{"app", 0, std::nullopt};
  auto staged = table.StageAppend(IdNameSchema(), options);
  auto stream = staged.NewFileStream(0);
  stream->Write(IdNameBatch(0, 5));
  auto files = stream->Finish();
  // Another writer with the same app id takes the txn while this one writes its files.
  DeltaTable::Open(dir.path()).Append({IdNameBatch(0, 5)}, options);
  const auto result = table.CommitStaged(staged, files);
  EXPECT_FALSE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.File(files[0].path)));
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 5);
  EXPECT_TRUE(table.StageAppend(IdNameSchema(), options).held_version());
}

TEST(DeltaTableStaged, DeleteUnnamedFilesKeepsEveryCommittedFile) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameTable());
  table.Append({IdNameBatch(0, 5)});
  const std::string committed = table.state().files.begin()->first;
  auto staged = table.StageAppend(IdNameSchema(), {});
  auto stream = staged.NewFileStream(0);
  stream->Write(IdNameBatch(5, 5));
  const auto orphan = stream->Finish();  // never committed: as a crash leaves it
  EXPECT_EQ(table.DeleteUnnamedFiles({committed, orphan[0].path, "part-00000-gone.parquet"}), 1);
  EXPECT_TRUE(std::filesystem::exists(dir.File(committed)));
  EXPECT_FALSE(std::filesystem::exists(dir.File(orphan[0].path)));
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 5);
}

}  // namespace
}  // namespace mssql_cdc::delta

namespace mssql_cdc::delta {
namespace {

TEST(DeltaTableScan, ColumnsComeInTheOrderAskedARowGroupAtATime) {
  TempTableDir dir;
  CreateOptions create;
  create.schema = IdNameSchema();
  auto table = DeltaTable::Create(dir.path(), create);
  AppendOptions options;
  options.write.row_group_rows = 4;
  table.Append({IdNameBatch(0, 10)}, options);
  auto merged = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("name", arrow::utf8()),
                               arrow::field("later", arrow::int32())});
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  arrow::Int32Builder later;
  ASSERT_TRUE(id.Append(100).ok() && name.Append("late").ok() && later.Append(7).ok());
  table.Append({arrow::RecordBatch::Make(merged, 1, {*id.Finish(), *name.Finish(), *later.Finish()})});
  std::vector<AddFile> files;
  for (const auto& [path, add] : table.state().files) files.push_back(add);
  std::vector<std::int64_t> sizes;
  std::int64_t id_sum = 0, nulls = 0;
  table.ScanFiles(files, {"later", "NAME", "id"}, [&](const arrow::RecordBatch& batch) {
    sizes.push_back(batch.num_rows());
    ASSERT_EQ(batch.schema()->field(0)->name(), "later");
    ASSERT_EQ(batch.column(1)->type()->id(), arrow::Type::STRING);
    nulls += batch.column(0)->null_count();
    const auto& ids = static_cast<const arrow::Int64Array&>(*batch.column(2));
    for (std::int64_t i = 0; i < ids.length(); ++i) id_sum += ids.Value(i);
  });
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(id_sum, 145);
  EXPECT_EQ(nulls, 10);  // a column the files lack reads NULL
}

}  // namespace
}  // namespace mssql_cdc::delta

#include <thread>

#include "delta/grouped_appender.h"

namespace mssql_cdc::delta {
namespace {

TEST(DeltaTableGrouped, SeveralTxnsInOneCommitAndHeldOnesLeftOut) {
  TempTableDir dir;
  CreateOptions create;
  create.schema = IdNameSchema();
  auto table = DeltaTable::Create(dir.path(), create);
  table.Append({IdNameBatch(0, 1)}, AppendOptions{Txn{"b", 3, std::nullopt}});
  const auto results = table.AppendGrouped({{Txn{"a", 0, std::nullopt}, {IdNameBatch(10, 2)}},
                                            {Txn{"b", 3, std::nullopt}, {IdNameBatch(20, 2)}},
                                            {Txn{"c", 5, std::nullopt}, {IdNameBatch(30, 2)}}});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].written);
  EXPECT_FALSE(results[1].written);  // b@3 was held: its rows are not written again
  EXPECT_EQ(results[1].version, 1);
  EXPECT_TRUE(results[2].written);
  EXPECT_EQ(results[0].version, 2);
  EXPECT_EQ(results[2].version, 2);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(2)), "txn").size(), 2u);
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 5);
  EXPECT_THROW(table.AppendGrouped({{Txn{"d", 0, std::nullopt}, {IdNameBatch(0, 1)}},
                                    {Txn{"d", 1, std::nullopt}, {IdNameBatch(0, 1)}}}),
               ConfigError);
}

TEST(DeltaTableGrouped, ARaceLostToAWinnerHoldingOneTxnIsPlannedAgainWithoutIt) {
  TempTableDir dir;
  CreateOptions create;
  create.schema = IdNameSchema();
  auto table = DeltaTable::Create(dir.path(), create);
  // Another writer takes version 1 with a@0 while this append writes its data file: a big one,
  // so that the writer is still at it when the watcher sees the file appear, however loaded the
  // machine (two rows were written and committed before the watcher ran, now and then).
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(1)),
      R"({"commitInfo":{"timestamp":1,"operation":"WRITE"}})" "\n"
      R"({"txn":{"appId":"a","version":0}})" "\n");
  const auto results = table.AppendGrouped({{Txn{"a", 0, std::nullopt}, {BigBatch(10)}},
                                            {Txn{"c", 0, std::nullopt}, {IdNameBatch(30, 2)}}});
  ASSERT_TRUE(winner.get());
  EXPECT_FALSE(results[0].written);
  EXPECT_EQ(results[0].version, 1);
  EXPECT_TRUE(results[1].written);
  EXPECT_EQ(results[1].version, 2);
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 2);  // c's rows only
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 1);  // the first plan's file is gone
}

TEST(GroupedAppender, ManyThreadsAppendOnceEachInFewerCommits) {
  TempTableDir dir;
  CreateOptions create;
  create.schema = IdNameSchema();
  GroupedAppender appender(DeltaTable::Create(dir.path(), create));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const auto result = appender.Append({IdNameBatch(t * 1000 + i, 1)},
                                            Txn{"app" + std::to_string(t), i, std::nullopt});
        EXPECT_TRUE(result.written);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  auto table = DeltaTable::Open(dir.path());
  EXPECT_EQ(table.Read()->num_rows(), 160);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(table.state().app_versions.at("app" + std::to_string(t)), 19);
  EXPECT_EQ(appender.appends(), 160);
  EXPECT_EQ(appender.commits(), table.state().version);  // after the create, one per commit
  EXPECT_LT(appender.commits(), 160);
}

}  // namespace
}  // namespace mssql_cdc::delta
