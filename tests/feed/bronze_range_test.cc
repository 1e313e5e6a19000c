// The bronze route's two halves (feed/bronze_range.h): ranges written into bronze's files by
// "tasks", then committed once per batch by the "sink".
#include "feed/bronze_range.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/table_schemas.h"
#include "feed/change_feed.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::StreamTest;

// The table's rows sorted by every column the two bronzes share, as one chunk per column.
std::shared_ptr<arrow::Table> Sorted(const std::shared_ptr<arrow::Table>& table) {
  std::vector<arrow::compute::SortKey> keys;
  for (const char* name : {"_start_lsn", "_command_id", "_seqval", "_operation", "id"}) {
    keys.emplace_back(name);
  }
  auto indices = arrow::compute::SortIndices(arrow::Datum(table),
                                             arrow::compute::SortOptions(keys)).ValueOrDie();
  return arrow::compute::Take(arrow::Datum(table), arrow::Datum(indices))
      .ValueOrDie().table()->CombineChunks().ValueOrDie();
}

class BronzeRangeTest : public StreamTest {
 protected:
  SourceOptions FeedOptions(const Options& extra = {}) const {
    return SourceOptions::Parse(SourceOptionsText().MergedWith(extra));
  }

  // An empty bronze table for the feed's output schema at `name` under the test directory.
  std::string CreateBronze(const SourceOptions& options, const std::string& name) {
    const std::string uri = dir_.File(name);
    ChangeFeed feed(options);
    delta::DeltaTable::Create(uri, BronzeTableOptions(feed.output_schema(), kInstance));
    return uri;
  }

  // Every range of the batch (start, end] written as Spark's tasks write them, part i each.
  std::vector<BronzeRangeFiles> WriteBatch(const SourceOptions& options, ChangeFeed& feed,
                                           const Offset& start, const Offset& end,
                                           const std::string& uri, std::int64_t batch_id) {
    std::vector<BronzeRangeFiles> ranges;
    const auto planned = feed.Partitions(start, end);
    for (std::size_t i = 0; i < planned.size(); ++i) {
      const FeedRangeShape shape{planned[i].capture_instance, feed.output_schema()};
      const BronzeRangeFiles written = WriteRangeToBronze(
          options, planned[i].from, planned[i].to, i + 1 == planned.size(), shape,
          {uri, batch_id, i});
      // What crosses from a task to the sink is the document.
      ranges.push_back(BronzeRangeFiles::FromJson(written.ToJson(), "range"));
    }
    return ranges;
  }

  static bool Exists(const std::string& uri, const delta::AddFile& add) {
    return std::filesystem::exists(std::filesystem::path(uri) / add.path);
  }
};

TEST_F(BronzeRangeTest, RangesCommittedPerBatchAreTheNativeStreamsBronze) {
  for (int commit = 0; commit < 12; ++commit) Insert(commit * 10'000 + 1, 10'000);
  for (int i = 1; i <= 50; ++i) Update(i * 7, i);
  for (int i = 1; i <= 20; ++i) Delete(i * 11);
  const Options extra{{"numPartitions", "4"}, {"maxCommitsPerBatch", "200"}};
  RunOnce(Config(extra));

  const SourceOptions options = FeedOptions(extra);
  const std::string uri = CreateBronze(options, "spark_bronze");
  ChangeFeed feed(options);
  Offset start = feed.InitialOffset();
  std::int64_t batch_id = 0;
  std::int64_t multi_range_batches = 0;
  for (;;) {
    const Offset end = feed.LatestOffset(start, options.max_commits_per_batch, std::nullopt);
    if (end == start) break;
    const auto ranges = WriteBatch(options, feed, start, end, uri, batch_id);
    if (ranges.size() > 1) ++multi_range_batches;
    const auto result = CommitBronzeRanges(uri, ranges, {"app", batch_id, std::nullopt}, "{}");
    EXPECT_TRUE(result.written);
    EXPECT_EQ(result.rows, SumRowStats(ranges).rows);
    start = end;
    ++batch_id;
  }
  EXPECT_GT(multi_range_batches, 0) << "some batch is split into ranges";
  auto mine = delta::DeltaTable::Open(uri);
  EXPECT_EQ(mine.state().app_versions.at("app"), batch_id - 1);
  // The same rows, batch ids included, as the native stream's bronze.
  const auto native = Bronze();
  const auto spark = mine.Read();
  ASSERT_TRUE(spark->schema()->Equals(*native->schema(), /*check_metadata=*/false));
  EXPECT_TRUE(Sorted(spark)->Equals(*Sorted(native)));
}

TEST_F(BronzeRangeTest, ASecondCommitOfABatchDeletesItsFilesAndCommitsNothing) {
  Insert(1, 100);
  const SourceOptions options = FeedOptions();
  const std::string uri = CreateBronze(options, "spark_bronze");
  ChangeFeed feed(options);
  const Offset start = feed.InitialOffset();
  const Offset end = *feed.MaxOffset();
  const auto first = WriteBatch(options, feed, start, end, uri, 0);
  ASSERT_TRUE(CommitBronzeRanges(uri, first, {"app", 0, std::nullopt}, "{}").written);
  const std::int64_t version = delta::DeltaTable::Open(uri).state().version;

  // Spark replays the batch after a crash: its tasks write the range again.
  const auto replay = WriteBatch(options, feed, start, end, uri, 0);
  ASSERT_FALSE(replay.at(0).files.empty());
  const auto result = CommitBronzeRanges(uri, replay, {"app", 0, std::nullopt}, "{}");
  EXPECT_FALSE(result.written);
  EXPECT_EQ(result.version, version);
  for (const auto& add : replay.at(0).files) EXPECT_FALSE(Exists(uri, add)) << add.path;
  for (const auto& add : first.at(0).files) EXPECT_TRUE(Exists(uri, add)) << add.path;
  EXPECT_EQ(delta::DeltaTable::Open(uri).Read()->num_rows(), 100);
}

TEST_F(BronzeRangeTest, FilesWrittenInAnotherSchemaThanBronzeTakesAreRefusedAndDeleted) {
  Insert(1, 10);
  const SourceOptions options = FeedOptions();
  const std::string uri = CreateBronze(options, "spark_bronze");
  ChangeFeed feed(options);
  auto ranges = WriteBatch(options, feed, feed.InitialOffset(), *feed.MaxOffset(), uri, 0);
  // Another writer added a column after the task wrote its files.
  {
    auto bronze = delta::DeltaTable::Open(uri);
    auto wider = bronze.state().schema()->AddField(0, arrow::field("note", arrow::utf8())).ValueOrDie();
    delta::AppendOptions append;
    append.txn = delta::Txn{"another writer", 0, std::nullopt};
    bronze.Append({arrow::RecordBatch::MakeEmpty(wider).ValueOrDie()}, append);
  }
  try {
    CommitBronzeRanges(uri, ranges, {"app", 0, std::nullopt}, "{}");
    FAIL() << "committed files of an older schema";
  } catch (const ConcurrentModificationError& e) {
    EXPECT_NE(std::string(e.what()).find("changed its schema while batch 0 was read"), std::string::npos)
        << e.what();
  }
  for (const auto& add : ranges.at(0).files) EXPECT_FALSE(Exists(uri, add)) << add.path;
  EXPECT_FALSE(delta::DeltaTable::Open(uri).state().app_versions.contains("app"));
}

TEST_F(BronzeRangeTest, ARangeWithoutRowsWritesNoFile) {
  Insert(1, 3);
  const SourceOptions options = FeedOptions();
  const std::string uri = CreateBronze(options, "spark_bronze");
  const Lsn after = ChangeFeed(options).MaxOffset()->lsn.Increment();
  const BronzeRangeFiles empty =
      WriteRangeToBronze(options, after, after, false, {}, {uri, 0, 0});
  EXPECT_TRUE(empty.files.empty());
  EXPECT_EQ(empty.stats.rows, 0);
}

TEST_F(BronzeRangeTest, ADocumentThatIsNotARangesFilesIsAConfigError) {
  EXPECT_THROW(BronzeRangeFiles::FromJson("{}", "range"), ConfigError);
  EXPECT_THROW(BronzeRangeFiles::FromJson("[1]", "range"), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc
