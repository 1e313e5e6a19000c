// Spark mode's planning and range reads decide what a native stream decides: the same start,
// the same batch ends, the same retention failures, and together the same rows as bronze.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "feed/change_feed.h"
#include "feed/feed_range.h"
#include "engine/stream.h"
#include "engine/stream_checkpoint.h"
#include "core/arrow_status.h"
#include "tests/testing/forwarding_source.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::Int64Column;
using stream_testing::StreamTest;
using testing::TestsReadThroughOdbc;

struct Crash : std::runtime_error {
  Crash() : std::runtime_error("simulated crash") {}
};

std::shared_ptr<arrow::Table> ReadAll(arrow::RecordBatchReader& reader,
                                      std::int64_t* max_batch_rows = nullptr) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader.ReadNext(&batch));
    if (!batch) break;
    if (max_batch_rows) *max_batch_rows = std::max(*max_batch_rows, batch->num_rows());
    batches.push_back(batch);
  }
  return arrow::Table::FromRecordBatches(reader.schema(), batches).ValueOrDie();
}

// The table's rows in change order, as one chunk per column.
std::shared_ptr<arrow::Table> InChangeOrder(const std::shared_ptr<arrow::Table>& table) {
  arrow::compute::SortOptions order({arrow::compute::SortKey("_start_lsn"),
                                     arrow::compute::SortKey("_command_id"),
                                     arrow::compute::SortKey("_seqval"),
                                     arrow::compute::SortKey("_operation")});
  auto indices = arrow::compute::SortIndices(arrow::Datum(table), order).ValueOrDie();
  auto sorted = arrow::compute::Take(arrow::Datum(table), arrow::Datum(indices)).ValueOrDie();
  return sorted.table()->CombineChunks().ValueOrDie();
}

class ChangeFeedTest : public StreamTest {
 protected:
  SourceOptions FeedOptions(const Options& extra = {}) const {
    return SourceOptions::Parse(SourceOptionsText().MergedWith(extra));
  }

  // The batch ends a feed plans from `start` until nothing is new.
  static std::vector<Offset> PlannedEnds(ChangeFeed& feed, Offset start,
                                         std::optional<std::int64_t> max_commits) {
    std::vector<Offset> ends;
    for (;;) {
      const Offset end = feed.LatestOffset(start, max_commits, std::nullopt);
      if (end == start) return ends;
      ends.push_back(end);
      start = end;
    }
  }

  // The batch ends a native run wrote to its checkpoint.
  std::vector<Offset> NativeEnds(const std::string& checkpoint) const {
    std::vector<Offset> ends;
    StreamCheckpoint native(checkpoint);
    for (std::int64_t id = 0;; ++id) {
      auto offsets = native.ReadOffsets(id);
      if (!offsets) return ends;
      ends.push_back(offsets->end);
    }
  }

  // Every range of every planned batch read through ReadFeedRange, as one table.
  std::shared_ptr<arrow::Table> ReadThroughFeed(const SourceOptions& options,
                                                std::int64_t* ranges_read = nullptr,
                                                std::int64_t* max_batch_rows = nullptr) {
    ChangeFeed feed(options);
    std::vector<std::shared_ptr<arrow::Table>> parts;
    Offset start = feed.InitialOffset();
    for (const Offset& end : PlannedEnds(feed, start, options.max_commits_per_batch)) {
      for (const LsnRange& range : feed.Partitions(start, end)) {
        auto reader = ReadFeedRange(options, range.from, range.to);
        EXPECT_TRUE(reader->schema()->Equals(*feed.output_schema(), /*check_metadata=*/true));
        parts.push_back(ReadAll(*reader, max_batch_rows));
        if (ranges_read) ++*ranges_read;
      }
      start = end;
    }
    return arrow::ConcatenateTables(parts).ValueOrDie();
  }

  // Bronze's rows in the output schema's columns.
  std::shared_ptr<arrow::Table> BronzeAsOutput(const arrow::Schema& output) const {
    auto bronze = Bronze();
    std::vector<int> columns;
    for (const auto& field : output.fields()) {
      columns.push_back(bronze->schema()->GetFieldIndex(field->name()));
    }
    return bronze->SelectColumns(columns).ValueOrDie();
  }

  // A first batch over two commits, then two hours of commits and a cleanup with 30 minutes'
  // retention: what the batch after the first one would read is purged.
  void ReadThenPurge(const Options& extra) {
    Insert(1);
    Insert(2);
    RunOnce(Config(extra));
    for (int i = 0; i < 12; ++i) {
      db_->AdvanceClock(10 * kMicrosPerMinute);
      Insert(100 + i);
    }
    ASSERT_GT(db_->Cleanup(30).change_rows_deleted, 0);
  }

  // Twelve commits ten minutes apart read in batches of 2 rows, with a cleanup (30 minutes'
  // retention) after the first batch; returns the status that ends the read.
  arrow::Status ReadWhileCleanupRuns(bool fail_on_data_loss) {
    for (int i = 0; i < 12; ++i) {
      db_->AdvanceClock(10 * kMicrosPerMinute);
      Insert(100 + i);
    }
    const SourceOptions options = FeedOptions(
        {{"arrowBatchSize", "2"}, {"failOnDataLoss", fail_on_data_loss ? "true" : "false"}});
    ChangeFeed feed(options);
    const auto ranges = feed.Partitions(feed.InitialOffset(), *feed.MaxOffset());
    EXPECT_EQ(ranges.size(), 1u);
    auto reader = ReadFeedRange(options, ranges.at(0).from, ranges.at(0).to);
    std::shared_ptr<arrow::RecordBatch> batch;
    EXPECT_TRUE(reader->ReadNext(&batch).ok());
    std::int64_t rows = batch->num_rows();
    EXPECT_EQ(rows, 2);
    EXPECT_GT(db_->Cleanup(30).change_rows_deleted, 0);
    arrow::Status status;
    while ((status = reader->ReadNext(&batch)).ok() && batch) rows += batch->num_rows();
    EXPECT_EQ(rows, 12) << "the read sees the range as it was when it began";
    return status;
  }
};

TEST_F(ChangeFeedTest, StartsWhereANativeStreamStarts) {
  const Lsn first = Insert(1);
  Insert(2);
  const Lsn third = Insert(3);
  int n = 0;
  for (const std::string& starting :
       std::vector<std::string>{"earliest", "latest", first.ToString()}) {
    const Options extra{{"startingLsn", starting}};
    StreamConfig native = Config(extra, "app" + std::to_string(n));
    native.params.checkpoint = dir_.File("checkpoint" + std::to_string(n));
    native.params.target = dir_.File("bronze" + std::to_string(n));
    RunOnce(native);
    const auto native_start = StreamCheckpoint(native.params.checkpoint).ReadStart();
    ASSERT_TRUE(native_start) << starting;
    ChangeFeed feed(FeedOptions(extra));
    EXPECT_EQ(feed.InitialOffset(), *native_start) << starting;
    ++n;
  }
  // Earliest counts the instance's first LSN as not yet processed.
  EXPECT_EQ(ChangeFeed(FeedOptions()).InitialOffset().lsn, db_->MinLsn(kInstance).Decrement());
  ChangeFeed latest(FeedOptions({{"startingLsn", "latest"}}));
  EXPECT_EQ(latest.InitialOffset().lsn, third);
  EXPECT_TRUE(latest.InitialOffset().commit_ts);
}

TEST_F(ChangeFeedTest, EndsEveryBatchWhereANativeStreamEndsIt) {
  for (int i = 1; i <= 7; ++i) Insert(i * 10, 2);
  Update(20, 5);
  Delete(30);
  db_->WriteIdleEntry();
  const Options extra{{"maxCommitsPerBatch", "3"}};
  RunOnce(Config(extra));
  const std::vector<Offset> native = NativeEnds(dir_.File("checkpoint"));
  ASSERT_EQ(native.size(), 4u);  // 10 commits and an idle entry, 3 a batch

  ChangeFeed feed(FeedOptions(extra));
  EXPECT_EQ(PlannedEnds(feed, feed.InitialOffset(), 3), native);
  // Without a limit one batch reaches the max LSN; a target stops it earlier.
  const Offset start = feed.InitialOffset();
  EXPECT_EQ(feed.LatestOffset(start, std::nullopt, std::nullopt), *feed.MaxOffset());
  EXPECT_EQ(feed.LatestOffset(start, std::nullopt, native[1].lsn), native[1]);
  EXPECT_EQ(feed.LatestOffset(native.back(), 3, std::nullopt), native.back());
}

TEST_F(ChangeFeedTest, RangesReadGiveTheRowsOfANativeStreamsBronze) {
  for (int commit = 0; commit < 12; ++commit) Insert(commit * 10'000 + 1, 10'000);
  for (int i = 1; i <= 300; ++i) Update(i * 7, i);
  for (int i = 1; i <= 100; ++i) Delete(i * 11);
  const Options extra{{"numPartitions", "4"}, {"maxCommitsPerBatch", "200"},
                      {"arrowBatchSize", "7000"}};
  RunOnce(Config(extra));

  std::int64_t ranges = 0;
  std::int64_t max_batch_rows = 0;
  const SourceOptions options = FeedOptions(extra);
  auto read = ReadThroughFeed(options, &ranges, &max_batch_rows);
  EXPECT_GT(ranges, 3) << "the 120,000-row batch is split";
  EXPECT_LE(max_batch_rows, 7000);
  const auto output = ChangeFeed(options).output_schema();
  auto bronze = BronzeAsOutput(*output);
  ASSERT_EQ(read->num_rows(), db_->ChangeRowCount(kInstance));
  EXPECT_TRUE(InChangeOrder(read)->Equals(*InChangeOrder(bronze)));
}

TEST_F(ChangeFeedTest, WithoutCommandIdTheSchemaAndRowsLeaveItOut) {
  Insert(1, 3);
  Update(2, 9);
  const Options extra{{"includeCommandId", "false"}};
  RunOnce(Config(extra));
  const SourceOptions options = FeedOptions(extra);
  ChangeFeed feed(options);
  EXPECT_EQ(feed.output_schema()->GetFieldIndex("_command_id"), -1);
  auto read = ReadThroughFeed(options);
  auto bronze = BronzeAsOutput(*feed.output_schema());
  auto order = [](const std::shared_ptr<arrow::Table>& t) {
    arrow::compute::SortOptions keys({arrow::compute::SortKey("_start_lsn"),
                                      arrow::compute::SortKey("_seqval"),
                                      arrow::compute::SortKey("_operation")});
    auto indices = arrow::compute::SortIndices(arrow::Datum(t), keys).ValueOrDie();
    return arrow::compute::Take(arrow::Datum(t), arrow::Datum(indices)).ValueOrDie().table();
  };
  EXPECT_EQ(read->num_rows(), 5);
  EXPECT_TRUE(order(read)->Equals(*order(bronze)));
}

TEST_F(ChangeFeedTest, NoRangesWhenNothingFollowsTheStart) {
  Insert(1);
  ChangeFeed feed(FeedOptions({{"numPartitions", "3"}}));
  const Offset max = *feed.MaxOffset();
  EXPECT_TRUE(feed.Partitions(max, max).empty());
  EXPECT_EQ(feed.LatestOffset(max, std::nullopt, std::nullopt), max);
  // A range of commits without rows of this instance: the split finds no rows.
  db_->WriteIdleEntry();
  const Offset idle = *feed.MaxOffset();
  EXPECT_TRUE(feed.Partitions(max, idle).empty());
}

// What Spark mode's tasks measure, folded by the sink's rule, is what the native stream's facts
// row holds for the same batch (the capture lag moves with the clock; the rest is exact).
TEST_F(ChangeFeedTest, RangeMeasuresFoldIntoTheNativeFactsRow) {
  // Two ranges of at least kMinRowsPerPartition rows each.
  for (int commit = 0; commit < 11; ++commit) Insert(commit * 10'000 + 1, 10'000);
  const Options extra{{"numPartitions", "2"}};
  RunOnce(Config(extra));
  const auto native = Facts();
  ASSERT_EQ(native->num_rows(), 1);

  const SourceOptions options = FeedOptions(extra);
  ChangeFeed feed(options);
  const Offset start = feed.InitialOffset();
  const Offset end = feed.LatestOffset(start, std::nullopt, std::nullopt);
  const auto ranges = feed.Partitions(start, end);
  ASSERT_EQ(ranges.size(), 2u);
  std::vector<RangeMeasures> measures;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    auto reader = ReadFeedRange(options, ranges[i].from, ranges[i].to, i + 1 == ranges.size());
    ReadAll(*reader);
    // Measures cross to the sink as JSON.
    measures.push_back(RangeMeasuresFromJson(RangeMeasuresToJson(reader->measures()), "test"));
  }
  EXPECT_FALSE(measures.front().end);
  ASSERT_TRUE(measures.back().end);
  FactsRow row;
  row.rows = 110'000;
  row.end_commit_ts = end.commit_ts;
  FoldMeasures(row, measures, std::nullopt);

  auto doubles = [&](const char* name) {
    return std::static_pointer_cast<arrow::DoubleArray>(native->GetColumnByName(name)->chunk(0))
        ->Value(0);
  };
  EXPECT_DOUBLE_EQ(*row.read_mb, doubles("read_mb"));
  EXPECT_GT(*row.read_seconds, 0.0);
  EXPECT_EQ(row.retention_watermark_ts->value, Int64Column(native, "retention_watermark_ts")[0]);
  EXPECT_EQ(row.source_max_commit_ts->value, Int64Column(native, "source_max_commit_ts")[0]);
  EXPECT_DOUBLE_EQ(*row.retention_headroom_hours, doubles("retention_headroom_hours"));
  EXPECT_DOUBLE_EQ(*row.ingestion_lag_seconds, doubles("ingestion_lag_seconds"));
  EXPECT_NEAR(*row.capture_lag_seconds, doubles("capture_lag_seconds"), 60.0);
  EXPECT_EQ(row.source_rtt_ms.has_value(), TestsReadThroughOdbc());

  // A batch of commits without rows of this instance is measured at planning.
  db_->WriteIdleEntry();
  const Offset idle = *feed.MaxOffset();
  ASSERT_TRUE(feed.Partitions(end, idle).empty());
  FactsRow empty;
  empty.rows = 0;
  empty.end_commit_ts = idle.commit_ts;
  FoldMeasures(empty, {feed.MeasureEmptyRead(end, idle)}, std::nullopt);
  EXPECT_EQ(*empty.read_mb, 0.0);
  EXPECT_EQ(empty.source_max_commit_ts, idle.commit_ts);
  EXPECT_TRUE(empty.retention_headroom_hours);

  // A batch with rows whose measures were lost keeps its read columns NULL.
  FactsRow lost;
  lost.rows = 10;
  FoldMeasures(lost, {}, std::nullopt);
  EXPECT_FALSE(lost.read_seconds);
  EXPECT_FALSE(lost.read_mb);
  EXPECT_THROW(RangeMeasuresFromJson("{\"rows\": 1}", "metrics file x"), ConfigError);
}

TEST_F(ChangeFeedTest, PurgedStartFailsWithTheNativeMessage) {
  ReadThenPurge({});
  std::string native;
  try {
    RunOnce(Config());
    FAIL() << "the native stream read a purged range";
  } catch (const DataLossError& e) {
    native = e.what();
  }
  const Offset start = StreamCheckpoint(dir_.File("checkpoint")).ReadOffsets(0)->end;
  ChangeFeed feed(FeedOptions());
  std::string expected = native;
  for (std::size_t at; (at = expected.find("batch 1")) != std::string::npos;) {
    expected.replace(at, 7, "this batch");
  }
  try {
    feed.LatestOffset(start, std::nullopt, std::nullopt);
    FAIL() << "no DataLossError";
  } catch (const DataLossError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_THROW(feed.Partitions(start, *feed.MaxOffset()), DataLossError);
  // Nothing new after the max LSN: no batch, so nothing to fail.
  EXPECT_EQ(feed.LatestOffset(*feed.MaxOffset(), std::nullopt, std::nullopt), *feed.MaxOffset());
}

TEST_F(ChangeFeedTest, PurgedStartWithoutFailOnDataLossReadsFromTheMinLsn) {
  const Options go_on{{"failOnDataLoss", "false"}};
  ReadThenPurge(go_on);
  const Offset start = StreamCheckpoint(dir_.File("checkpoint")).ReadOffsets(0)->end;
  const SourceOptions options = FeedOptions(go_on);
  ChangeFeed feed(options);
  const Offset end = feed.LatestOffset(start, std::nullopt, std::nullopt);
  EXPECT_EQ(end, *feed.MaxOffset());
  const auto purged = feed.Purged(start);
  ASSERT_TRUE(purged);
  const Lsn min_lsn = db_->MinLsn(kInstance);
  EXPECT_EQ(purged->first_lost, start.lsn.Increment());
  EXPECT_EQ(purged->retention.min_lsn, min_lsn);
  EXPECT_EQ(purged->retention.watermark_ts, stream_testing::At("2026-03-01 01:40:12"));
  const auto ranges = feed.Partitions(start, end);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].from, min_lsn);
  auto reader = ReadFeedRange(options, ranges[0].from, ranges[0].to);
  EXPECT_EQ(ReadAll(*reader)->num_rows(), db_->ChangeRowCount(kInstance));
  EXPECT_FALSE(feed.Purged(end));
}

// Counts what a batch's planning asks the source that does not change within a batch.
struct PlanningQuestions {
  int instance_lists = 0;  // the table's capture instances (or all of them)
  int min_lsns = 0;
  int ddl_histories = 0;
};

class CountingSource : public testing::ForwardingSource {
 public:
  CountingSource(std::unique_ptr<Source> inner, PlanningQuestions& asked)
      : ForwardingSource(std::move(inner)), asked_(asked) {}
  std::vector<CaptureInstanceInfo> ListCaptureInstances() override {
    ++asked_.instance_lists;
    return ForwardingSource::ListCaptureInstances();
  }
  std::vector<CaptureInstanceInfo> ListTableInstances(const std::string& source_schema,
                                                      const std::string& source_table) override {
    ++asked_.instance_lists;
    return ForwardingSource::ListTableInstances(source_schema, source_table);
  }
  Lsn MinLsn(const std::string& ci) override {
    ++asked_.min_lsns;
    return ForwardingSource::MinLsn(ci);
  }
  std::vector<DdlEvent> DdlHistory(const std::string& ci) override {
    ++asked_.ddl_histories;
    return ForwardingSource::DdlHistory(ci);
  }

 private:
  PlanningQuestions& asked_;
};

// Spark asks a batch's end, its ranges, its purged changes, its schema events (and, for a
// batch of no range, its measures) in separate calls; the source is asked once for what they
// share, and for a batch replayed by a new driver (no end asked first) once too.
TEST_F(ChangeFeedTest, ABatchListsTheInstancesAndReadsRetentionAndDdlOnce) {
  Insert(1);
  Insert(2);
  const SourceOptions options = FeedOptions();
  const SourceFactory real = MakeSourceFactory(options);
  PlanningQuestions asked;
  const auto counted = [&] { return std::make_unique<CountingSource>(real(), asked); };
  ChangeFeed feed(options, counted);
  const Offset start = feed.InitialOffset();
  asked = {};
  const Offset end = feed.LatestOffset(start, std::nullopt, std::nullopt);
  ASSERT_NE(end, start);
  const std::vector<LsnRange> ranges = feed.Partitions(start, end);
  EXPECT_EQ(ranges.size(), 1u);
  EXPECT_FALSE(feed.Purged(start));
  EXPECT_TRUE(feed.SchemaEvents(start, end).empty());
  feed.MeasureEmptyRead(start, end);  // as a batch of no range is measured
  EXPECT_EQ(asked.instance_lists, 1);
  EXPECT_EQ(asked.min_lsns, 1);
  EXPECT_EQ(asked.ddl_histories, 1);

  ChangeFeed replay(options, counted);
  asked = {};
  EXPECT_EQ(replay.Partitions(start, end).size(), ranges.size());
  EXPECT_FALSE(replay.Purged(start));
  EXPECT_TRUE(replay.SchemaEvents(start, end).empty());
  EXPECT_EQ(asked.instance_lists, 1);
  EXPECT_EQ(asked.min_lsns, 1);
  EXPECT_EQ(asked.ddl_histories, 1);

  // The next batch is planned afresh: its retention is read again.
  Insert(3);
  asked = {};
  const Offset next = feed.LatestOffset(end, std::nullopt, std::nullopt);
  ASSERT_NE(next, end);
  feed.Partitions(end, next);
  EXPECT_EQ(asked.instance_lists, 1);
  EXPECT_EQ(asked.min_lsns, 1);
}

TEST_F(ChangeFeedTest, CleanupDuringARangeReadFailsItsLastRead) {
  EXPECT_THROW(ThrowIfError(ReadWhileCleanupRuns(true)), DataLossError);
}

TEST_F(ChangeFeedTest, CleanupDuringARangeReadWithoutFailOnDataLossEndsIt) {
  const arrow::Status status = ReadWhileCleanupRuns(false);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST_F(ChangeFeedTest, BootstrapIsTheNativeOneAndIsTakenOnce) {
  Insert(1, 20);
  Delete(3);
  StreamConfig native = Config();
  native.params.bootstrap = true;
  RunOnce(native);
  const auto native_snapshot = StreamCheckpoint(dir_.File("checkpoint")).ReadSnapshot();
  ASSERT_TRUE(native_snapshot && native_snapshot->done);

  ChangeFeed feed(FeedOptions());
  const FeedBootstrapRequest request{dir_.File("spark_bronze"), "spark", dir_.File("state"),
                                     dir_.File("spark_facts")};
  const Offset start = feed.Bootstrap(request);
  EXPECT_EQ(start, native_snapshot->offset);
  auto bronze = delta::DeltaTable::Open(request.target);
  EXPECT_EQ(bronze.Read()->num_rows(), 19);
  EXPECT_EQ(bronze.state().metadata.description,
            delta::DeltaTable::Open(dir_.File("bronze")).state().metadata.description);
  const std::int64_t version = bronze.state().version;

  Insert(100);
  EXPECT_EQ(ChangeFeed(FeedOptions()).Bootstrap(request), start) << "taken once";
  EXPECT_EQ(delta::DeltaTable::Open(request.target).state().version, version);
  // snapshot_open and bootstrap, written once.
  EXPECT_EQ(delta::DeltaTable::Open(*request.facts_table).Read()->num_rows(), 2);
  EXPECT_EQ(NativeHandoverOffset(request.state_dir), start);

  ChangeFeed with_start(FeedOptions({{"startingLsn", "latest"}}));
  EXPECT_THROW(with_start.Bootstrap(request), ConfigError);
}

TEST_F(ChangeFeedTest, NativeCheckpointHandsOverWhereItsBronzeEnds) {
  for (int i = 1; i <= 6; ++i) Insert(i);
  const Options small{{"maxCommitsPerBatch", "2"}};
  for (const BatchStep crash_at : {BatchStep::kOffsetsWritten, BatchStep::kBronzeAppended}) {
    SCOPED_TRACE(static_cast<int>(crash_at));
    StreamConfig crashing = Config(small, "app" + std::to_string(static_cast<int>(crash_at)));
    crashing.params.checkpoint = dir_.File("cp" + std::to_string(static_cast<int>(crash_at)));
    crashing.params.target = dir_.File("b" + std::to_string(static_cast<int>(crash_at)));
    crashing.step_hook = [&](BatchStep step, std::int64_t batch_id) {
      if (batch_id == 1 && step == crash_at) throw Crash();
    };
    EXPECT_THROW(RunOnce(crashing), Crash);
    const auto batch1 = StreamCheckpoint(crashing.params.checkpoint).ReadOffsets(1);
    ASSERT_TRUE(batch1);
    const Offset expected =
        crash_at == BatchStep::kBronzeAppended ? batch1->end : batch1->start;
    EXPECT_EQ(NativeHandoverOffset(crashing.params.checkpoint), expected);
  }
  const StreamProgress done = RunOnce(Config(small));
  EXPECT_EQ(NativeHandoverOffset(dir_.File("checkpoint")), done.end);
  EXPECT_THROW(NativeHandoverOffset(dir_.File("nowhere")), NotFoundError);
}

TEST_F(ChangeFeedTest, OptionsAndNamesAreCheckedAsANativeStreamChecksThem) {
  EXPECT_THROW({ ChangeFeed feed(FeedOptions({{"captureInstance", "dbo_nope"}})); },
               NotFoundError);
  // A listed column no instance captures, as a native stream refuses it.
  EXPECT_THROW({ ChangeFeed feed(FeedOptions({{"columns", "id INT, nope INT"}})); }, ConfigError);
  EXPECT_THROW(ReadFeedRange(FeedOptions({{"columns", "id INT, nope INT"}}), Lsn(), Lsn()), ConfigError);
  EXPECT_EQ(ChangeFeed(FeedOptions({{"columns", "ID BIGINT"}})).output_schema()->field(6)->ToString(),
            "id: int64");
  SourceOptions unnamed = FeedOptions();
  unnamed.capture_instance.clear();
  EXPECT_THROW(ChangeFeed{unnamed}, ConfigError);
  // Names resolve as the native stream resolves them: exact, else ignoring case.
  EXPECT_EQ(ChangeFeed(FeedOptions({{"captureInstance", "DBO_ITEMS"}})).instance().name,
            kInstance);
}

}  // namespace
}  // namespace mssql_cdc
