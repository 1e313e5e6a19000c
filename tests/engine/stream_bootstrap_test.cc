// Bootstrap: a full snapshot at the max LSN recorded before the read, the stream going on
// from there, reruns that do not take it again, and an interrupted bootstrap finished once.
#include <gtest/gtest.h>

#include <set>

#include "core/errors.h"
#include "engine/stream.h"
#include "engine/stream_checkpoint.h"
#include "snapshot/range_plan.h"
#include "tests/testing/stream_test_util.h"

namespace mssql_cdc {
namespace {

using stream_testing::Int64Column;
using stream_testing::StreamTest;
using stream_testing::StringColumn;

class StreamBootstrapTest : public StreamTest {
 protected:
  StreamConfig BootstrapConfig() {
    StreamConfig config = Config();
    config.params.bootstrap = true;
    return config;
  }

  // Ids of bronze's operation-0 rows, and the _snapshot values they carry.
  std::multiset<std::int64_t> SnapshotIds(std::set<std::string>* stamps = nullptr) {
    auto bronze = Bronze();
    const auto ops = Int64Column(bronze, "_operation");
    const auto ids = Int64Column(bronze, "id");
    const auto snapshot = StringColumn(bronze, "_snapshot");
    const auto start = StringColumn(bronze, "_start_lsn");
    const auto batch = Int64Column(bronze, "_batch_id");
    std::multiset<std::int64_t> out;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i] != 0) continue;
      out.insert(ids[i]);
      EXPECT_EQ(batch[i], -1) << "snapshot rows have no batch id";
      EXPECT_EQ(snapshot[i], start[i]) << "a whole snapshot has _snapshot = _start_lsn";
      if (stamps && snapshot[i]) stamps->insert(*snapshot[i]);
    }
    return out;
  }

  std::multiset<std::int64_t> SourceIds() {
    std::multiset<std::int64_t> out;
    for (const auto& row : db_->Rows(items_)) out.insert(row.at("id").as_int());
    return out;
  }

  std::int64_t BootstrapFactsRows() {
    std::int64_t n = 0;
    for (const auto& event : StringColumn(Facts(), "event")) n += event == "bootstrap";
    return n;
  }
};

TEST_F(StreamBootstrapTest, SnapshotAtTheMaxLsnThenTheChangesAfterIt) {
  Insert(1, 20);
  Update(3, 100);
  Delete(4);
  const Lsn snapshot_lsn = *db_->MaxLsn();
  const StreamProgress first = RunOnce(BootstrapConfig());
  std::set<std::string> stamps;
  EXPECT_EQ(SnapshotIds(&stamps), SourceIds());
  EXPECT_EQ(stamps, std::set<std::string>{snapshot_lsn.ToString()});
  EXPECT_EQ(first.batches, 0);  // nothing committed after L
  EXPECT_TRUE(BronzeChanges().empty());
  {
    // Facts: snapshot_open (before the read) and bootstrap, both at L.
    const auto opened = Facts();
    const auto kinds = StringColumn(opened, "event");
    const auto at = StringColumn(opened, "max_lsn");
    const auto detail = StringColumn(opened, "detail");
    std::multiset<std::string> seen;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (!kinds[i]) continue;
      seen.insert(*kinds[i]);
      EXPECT_EQ(at[i], snapshot_lsn.ToString());
      if (*kinds[i] == "snapshot_open") {
        EXPECT_EQ(*detail[i], R"({"generation":0,"kind":"bootstrap","lost_from_ts":null,"lost_to_ts":null,"mode":"full"})");
      }
    }
    EXPECT_EQ(seen, (std::multiset<std::string>{"bootstrap", "snapshot_open"}));
  }

  // The stream goes on from L: only changes after it arrive as change rows.
  Insert(30, 2);
  Delete(1);
  const StreamProgress second = RunOnce(BootstrapConfig());
  EXPECT_EQ(second.total_rows, 3);
  std::multiset<stream_testing::ChangeKey> after_l;
  for (const auto& key : SourceChanges()) {
    if (std::get<0>(key) > snapshot_lsn.ToString()) after_l.insert(key);
  }
  EXPECT_EQ(BronzeChanges(), after_l);
  EXPECT_EQ(SnapshotIds().size(), 19u);  // not taken again
  EXPECT_EQ(BootstrapFactsRows(), 1);

  auto facts = Facts();
  const auto events = StringColumn(facts, "event");
  const auto rows = Int64Column(facts, "rows");
  const auto batch_ids = Int64Column(facts, "batch_id");
  const auto min_lsn = StringColumn(facts, "min_lsn");
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] != "bootstrap") continue;
    EXPECT_EQ(rows[i], 19);
    EXPECT_EQ(batch_ids[i], -1);
    EXPECT_EQ(min_lsn[i], snapshot_lsn.ToString());
  }
}

TEST_F(StreamBootstrapTest, ABigTableIsReadInParallelRangesIntoOneCommit) {
  // Enough rows for three ranges of kMinRangeRows; the key is one integer: uniform ranges.
  Insert(1, 3 * static_cast<int>(kMinRangeRows) + 10);
  Delete(777);
  StreamConfig config = BootstrapConfig();
  config.source.num_partitions = 4;
  const StreamProgress first = RunOnce(std::move(config));
  EXPECT_EQ(first.batches, 0);
  EXPECT_EQ(SnapshotIds(), SourceIds());
  EXPECT_EQ(BootstrapFactsRows(), 1);
  // One commit holding the files of three ranges, written at once.
  const auto bronze = delta::DeltaTable::Open(dir_.File("bronze"));
  const auto files = bronze.FilesAddedBy(bronze.state().version);
  ASSERT_TRUE(files);
  std::set<std::string> parts;
  for (const auto& file : *files) parts.insert(file.path.substr(0, file.path.find('-', 5)));
  EXPECT_EQ(parts, (std::set<std::string>{"part-00000", "part-00001", "part-00002"}));
}

TEST_F(StreamBootstrapTest, ANewCheckpointFindsTheSnapshotBronzeHoldsAndReadsNothing) {
  Insert(1, 20);
  const Lsn snapshot_lsn = *db_->MaxLsn();
  RunOnce(BootstrapConfig());
  Insert(100, 3);
  // A new stream (new checkpoint, new app_id) into the same bronze: the snapshot of the table
  // is found by its rows, and the stream starts from its LSN.
  StreamConfig again = Config({}, "app-v2");
  again.params.bootstrap = true;
  again.params.checkpoint = dir_.File("checkpoint-v2");
  const StreamProgress second = RunOnce(std::move(again));
  std::set<std::string> stamps;
  const auto ids = SnapshotIds(&stamps);
  EXPECT_EQ(ids.size(), 20u);  // not taken twice
  EXPECT_EQ(stamps, std::set<std::string>{snapshot_lsn.ToString()});
  EXPECT_EQ(second.total_rows, 3);  // the changes after the snapshot
  EXPECT_EQ(BootstrapFactsRows(), 2);  // each stream records where it started
  const auto start = StreamCheckpoint(dir_.File("checkpoint-v2")).ReadStart();
  ASSERT_TRUE(start);
  EXPECT_EQ(start->lsn, snapshot_lsn);
}

TEST_F(StreamBootstrapTest, AnInterruptedBootstrapIsFinishedWithoutASecondCopy) {
  Insert(1, 10);
  RunOnce(BootstrapConfig());
  // As if the run had died after the snapshot's bronze commit, before marking it done: the
  // checkpoint says "open" and has no start yet.
  StreamCheckpoint checkpoint(dir_.File("checkpoint"));
  auto state = *checkpoint.ReadSnapshot();
  state.done = false;
  checkpoint.WriteSnapshot(state);
  std::filesystem::remove(dir_.File("checkpoint") + "/start.json");
  Insert(20, 2);
  RunOnce(BootstrapConfig());
  EXPECT_EQ(SnapshotIds().size(), 10u);
  EXPECT_EQ(BootstrapFactsRows(), 1);
  EXPECT_EQ(checkpoint.ReadSnapshot()->rows, 10);
  EXPECT_TRUE(checkpoint.ReadSnapshot()->done);
  EXPECT_EQ(BronzeChanges().size(), 2u);  // the stream started at the same L
}

TEST_F(StreamBootstrapTest, AnOpenSnapshotWithoutDataIsRetakenAtTheSameLsn) {
  Insert(1, 5);
  const Lsn recorded = *db_->MaxLsn();
  StreamCheckpoint checkpoint(dir_.File("checkpoint"));
  checkpoint.ClaimFor({"app", kInstance, dir_.File("bronze")});
  checkpoint.WriteSnapshot(SnapshotState{false, Offset{recorded, std::nullopt}, 0, -1});
  Insert(6, 1);  // after L: must arrive as a change
  RunOnce(BootstrapConfig());
  std::set<std::string> stamps;
  EXPECT_EQ(SnapshotIds(&stamps).size(), 6u);  // rows are read now, stamped L
  EXPECT_EQ(stamps, std::set<std::string>{recorded.ToString()});
  EXPECT_EQ(BronzeChanges().size(), 1u);
}

}  // namespace
}  // namespace mssql_cdc
