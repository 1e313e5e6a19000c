// Reading a snapshot's ranges at once: through one merged reader every row comes once,
// several Sources read together, a failing range ends the reader with its error, and a reader
// dropped half-way stops the reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <set>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "snapshot/parallel_snapshot.h"
#include "core/arrow_status.h"
#include "source/open_source.h"
#include "source/sim/sim_source.h"
#include "tests/testing/forwarding_source.h"
#include "tests/testing/cdc_table.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

constexpr int kRows = 2000;

// Fails every snapshot read whose range starts at `failing_lo`.
class FailingRangeSource : public testing::ForwardingSource {
 public:
  FailingRangeSource(std::unique_ptr<Source> inner, nlohmann::json failing_lo)
      : ForwardingSource(std::move(inner)), failing_lo_(std::move(failing_lo)) {}
  std::unique_ptr<arrow::RecordBatchReader> ReadSnapshot(const SnapshotReadRequest& request) override {
    if (request.lo == failing_lo_) throw SourceError("range starting at " + failing_lo_.dump() + " failed");
    return ForwardingSource::ReadSnapshot(request);
  }

 private:
  nlohmann::json failing_lo_;
};

class ParallelSnapshotTest : public ::testing::Test {
 protected:
  ParallelSnapshotTest() : path_(dir_.File("cdc.db")) {
    auto db = sim::SimDatabase::Create(path_, {});
    const auto table = testing::CreateCdcTable(*db, "dbo.t", {"id int not null", "v nvarchar(20)"}, {"id"});
    auto t = db->Begin();
    std::vector<sim::Row> rows;
    for (int i = 0; i < kRows; ++i) rows.push_back({{"id", i}, {"v", "row " + std::to_string(i)}});
    t->InsertMany(table, std::move(rows));
    t->Commit();
  }

  ParallelSnapshotRequest Request(int ranges) {
    ParallelSnapshotRequest request;
    request.capture_instance = "dbo_t";
    request.plan.kind = RangeKind::kUniform;
    request.plan.key_columns = {"id"};
    request.plan.ranges = UniformRanges(0, kRows - 1, ranges);
    request.batch_rows = 64;
    return request;
  }

  static SnapshotBatchTransform Identity(const std::shared_ptr<arrow::Schema>& schema) {
    return {schema, [](const auto& batch, std::size_t) { return batch; }};
  }

  testing::TempDir dir_;
  std::string path_;
};

TEST_F(ParallelSnapshotTest, TheMergedReaderGivesEveryRowOnceFromSeveralSources) {
  auto first = OpenSimSource(path_);
  SourcePool pool([this] { return OpenSimSource(path_); }, 3);
  auto schema = first->ReadSnapshot({"dbo_t"})->schema();
  ParallelSnapshot snapshot(Request(4), *first, pool, Identity(schema));
  auto reader = snapshot.Merged();
  std::multiset<std::int32_t> ids;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader->ReadNext(&batch));
    if (!batch) break;
    const auto& id = static_cast<const arrow::Int32Array&>(*batch->GetColumnByName("id"));
    for (std::int64_t i = 0; i < id.length(); ++i) ids.insert(id.Value(i));
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(std::set<std::int32_t>(ids.begin(), ids.end()).size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(snapshot.rows(), kRows);
  EXPECT_EQ(pool.most_open(), 3);  // three ranges borrowed a Source, the fourth used the first
}

TEST_F(ParallelSnapshotTest, AFailingRangeEndsTheReaderWithItsError) {
  auto request = Request(4);
  FailingRangeSource first(OpenSimSource(path_), request.plan.ranges[2].lo);
  SourcePool pool([&] { return std::make_unique<FailingRangeSource>(OpenSimSource(path_), request.plan.ranges[2].lo); }, 3);
  auto schema = OpenSimSource(path_)->ReadSnapshot({"dbo_t"})->schema();
  ParallelSnapshot snapshot(request, first, pool, Identity(schema));
  auto reader = snapshot.Merged();
  try {
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ThrowIfError(reader->ReadNext(&batch));
      if (!batch) break;
    }
    FAIL() << "no error";
  } catch (const SourceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("failed"));
  }
}

TEST_F(ParallelSnapshotTest, DroppingTheReaderHalfWayStopsTheReads) {
  auto first = OpenSimSource(path_);
  SourcePool pool([this] { return OpenSimSource(path_); }, 3);
  auto schema = first->ReadSnapshot({"dbo_t"})->schema();
  ParallelSnapshot snapshot(Request(4), *first, pool, Identity(schema));
  {
    auto reader = snapshot.Merged();
    std::shared_ptr<arrow::RecordBatch> batch;
    ThrowIfError(reader->ReadNext(&batch));
    ASSERT_TRUE(batch);
  }  // joins the reads: the test would hang here if they kept waiting for room
  EXPECT_LT(snapshot.rows(), kRows);
}

}  // namespace
}  // namespace mssql_cdc
