// A batch streams into its data files: one transaction larger than a range's memory share goes
// through as many row groups and files named by one commit; the files of a batch a crash
// stopped before its commit are deleted by the next run; the budget is checked before anything
// is written.
#include <gtest/gtest.h>
#include <parquet/file_reader.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "engine/engine_limits.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::StreamTest;
namespace fs = std::filesystem;

std::vector<std::string> DataFiles(const std::string& table) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(table)) {
    const auto name = entry.path().filename().string();
    if (name.ends_with(".parquet")) files.push_back(name);
  }
  return files;
}

std::set<std::string> NamedFiles(const std::string& table) {
  std::set<std::string> names;
  const auto opened = delta::DeltaTable::Open(table);
  for (const auto& [path, add] : opened.state().files) names.insert(path);
  return names;
}

TEST_F(StreamTest, ATransactionBiggerThanTheMemoryShareStreamsIntoManyRowGroups) {
  Insert(1, 20'000);  // one commit: a batch cannot be split below it
  StreamConfig config = Config({{"numPartitions", "1"}, {"arrowBatchSize", "1000"}});
  config.limits.memory_budget = 1LL << 20;  // 1 MiB: row groups of 512 KiB, batches of 128 KiB
  const StreamProgress progress = RunOnce(config);
  EXPECT_EQ(progress.batches, 1);
  EXPECT_EQ(progress.total_rows, 20'000);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  const auto files = DataFiles(dir_.File("bronze"));
  ASSERT_EQ(files.size(), 1u);  // well under the target file size
  auto reader = parquet::ParquetFileReader::OpenFile(dir_.File("bronze/" + files[0]));
  EXPECT_GT(reader->metadata()->num_row_groups(), 1);
  // One bronze commit after the create, naming every file; no staged list left behind.
  EXPECT_EQ(delta::DeltaTable::Open(dir_.File("bronze")).state().version, 1);
  EXPECT_FALSE(fs::exists(dir_.File("checkpoint/staged/0.files")));
}

TEST_F(StreamTest, FilesOfABatchStoppedBeforeItsCommitAreDeletedByTheNextRun) {
  Insert(1, 5);
  RunOnce(Config());
  // What a SIGKILL mid-batch leaves: a data file in bronze and one in facts, listed in the
  // checkpoint's staged list, named by no commit.
  const std::string bronze_orphan = "part-00000-00000000-0000-4000-8000-000000000001-c000.snappy.parquet";
  const std::string facts_orphan = "part-00000-00000000-0000-4000-8000-000000000002-c000.snappy.parquet";
  fs::copy_file(dir_.File("bronze/" + *NamedFiles(dir_.File("bronze")).begin()),
                dir_.File("bronze/" + bronze_orphan));
  fs::copy_file(dir_.File("facts/" + *NamedFiles(dir_.File("facts")).begin()),
                dir_.File("facts/" + facts_orphan));
  fs::create_directories(dir_.File("checkpoint/staged"));
  std::ofstream(dir_.File("checkpoint/staged/1.files"))
      << "bronze " << bronze_orphan << "\nfacts " << facts_orphan << "\n"
      << "bronze ../../elsewhere\nbronze part-named-by-a-commit\n";
  // A file of a committed batch listed as well (a crash after the commit, before the list went).
  const std::string committed = *NamedFiles(dir_.File("bronze")).begin();
  std::ofstream(dir_.File("checkpoint/staged/0.files"), std::ios::app) << "bronze " << committed << "\n";

  Insert(6, 5);
  RunOnce(Config());
  EXPECT_FALSE(fs::exists(dir_.File("bronze/" + bronze_orphan)));
  EXPECT_FALSE(fs::exists(dir_.File("facts/" + facts_orphan)));
  EXPECT_TRUE(fs::exists(dir_.File("bronze/" + committed)));
  EXPECT_FALSE(fs::exists(dir_.File("checkpoint/staged")) &&
               !fs::is_empty(dir_.File("checkpoint/staged")));
  const auto named = NamedFiles(dir_.File("bronze"));
  for (const auto& file : DataFiles(dir_.File("bronze"))) EXPECT_TRUE(named.count(file)) << file;
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamTest, ABudgetTooSmallForOneRowIsRefusedBeforeAnythingIsWritten) {
  Insert(1, 1);
  StreamConfig config = Config({{"numPartitions", "2"}});
  config.limits.memory_budget = 1LL << 20;
  config.limits.connections = 8;
  // nvarchar(40) and two ints fit a 1 MiB budget; a (max) column counted at 1 MiB does not.
  EXPECT_NO_THROW(RunOnce(config));
  EXPECT_GT(DeclaredRowBytes({{"note", 1, 1, SqlType::Parse("nvarchar(max)")}}), 1 << 20);
  try {
    CheckRowFitsBudget({{"note", 1, 1, SqlType::Parse("nvarchar(max)")}}, "dbo_notes", config.limits, 2);
    FAIL() << "a (max) column fits 64 KiB batches";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("give memory_budget at least 16.0 MiB"), std::string::npos)
        << e.what();
  }
}

TEST_F(StreamTest, MoreExplicitPartitionsThanConnectionsAreRefused) {
  StreamConfig config = Config({{"numPartitions", "5"}});
  config.limits.connections = 4;
  EXPECT_THROW(Stream(config, nullptr), ConfigError);
  config.source.num_partitions.reset();  // the default never asks for more than there are
  EXPECT_NO_THROW(Stream(config, nullptr));
}

TEST(EngineLimits, ByteSizesSayTheirUnit) {
  EXPECT_EQ(ParseByteSize("512 MiB", "x"), 512LL << 20);
  EXPECT_EQ(ParseByteSize("2GiB", "x"), 2LL << 30);
  EXPECT_EQ(ParseByteSize("1 GB", "x"), 1'000'000'000);
  EXPECT_EQ(ParseByteSize("300KB", "x"), 300'000);
  for (const char* bad : {"512", "512 mb", "1.5 GiB", "-1 MiB", "MiB", "99999999999 GiB", "1 TiB"}) {
    EXPECT_THROW(ParseByteSize(bad, "memory_budget"), ConfigError) << bad;
  }
  EXPECT_EQ(FormatByteSize(256LL << 20), "256 MiB");
  EXPECT_EQ(FormatByteSize(1153434), "1.1 MiB");
  const auto limits = EngineLimits::Parse(
      Options{{"memory_budget", "1 GiB"}, {"Connections", "12"}, {"workers", "3"}, {"maxStreams", "5"}});
  EXPECT_EQ(limits.memory_budget, 1LL << 30);
  EXPECT_EQ(limits.connections, 12);
  EXPECT_EQ(limits.workers, 3);
  EXPECT_EQ(limits.max_streams, 5);
  EXPECT_THROW(EngineLimits::Parse(Options{{"connections", "0"}}), ConfigError);
  EXPECT_THROW(EngineLimits::Parse(Options{{"threads", "4"}}), ConfigError);
  EXPECT_THROW(EngineLimits::Parse(Options{{"memory_budget", "512 KiB"}}), ConfigError);
}

TEST(EngineLimits, ASpillDirectoryMustBeAnExistingDirectory) {
  const auto tmp = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(EngineLimits::Parse(Options{{"spill_directory", tmp}}).spill_directory, tmp);
  EXPECT_EQ(EngineLimits::Parse(Options{}).spill_directory, "");
  for (const std::string bad : {tmp + "/mssql-cdc-no-such-directory", std::string("/etc/hostname")}) {
    try {
      EngineLimits::Parse(Options{{"spill_directory", bad}});
      ADD_FAILURE() << "expected a ConfigError for " << bad;
    } catch (const ConfigError& error) {
      EXPECT_NE(std::string(error.what()).find(bad), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("not a directory"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace mssql_cdc

namespace mssql_cdc {
namespace {

using stream_testing::StreamTest;

TEST_F(StreamTest, ASourceReusesItsConnectionForEveryBatchItReads) {
  testing::ServedSim served(db_->path());
  for (int i = 1; i <= 6; ++i) Insert(i * 10, 3);
  StreamConfig config = Config({{"numPartitions", "1"}, {"maxCommitsPerBatch", "1"}});
  config.source = SourceOptions::Parse(served.SourceOptionsText().MergedWith(
      Options{{"captureInstance", kInstance}, {"sourceTimeZone", "UTC"}, {"numPartitions", "1"},
              {"maxCommitsPerBatch", "1"}}));
  const StreamProgress progress = RunOnce(config);
  EXPECT_GE(progress.batches, 6);
  EXPECT_EQ(BronzeChanges(), SourceChanges());
  // Six batches at least, each with its change read and its catalog and LSN questions: the
  // source's connections log in once.
  EXPECT_EQ(served.logins(), testing::ConnectionsPerSource());
}

}  // namespace
}  // namespace mssql_cdc
