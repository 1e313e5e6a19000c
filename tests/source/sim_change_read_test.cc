// Change reads of the sim backend: the rows of the range in order, batches, metadata columns,
// commit times, column selection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/timezone.h"
#include "read_helpers.h"
#include "sim_fixture.h"
#include "source/sim/sim_source.h"

namespace mssql_cdc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;  // mssql_cdc::testing: sim_fixture.h, read_helpers.h

std::string Hex(std::uint64_t v) { return L(v).ToString(); }

std::int64_t Micros(const std::string& text) { return *ParseDateTime(text); }

// dbo.orders(id, note): commits L(10) (two inserts), L(20) idle, L(30) (an update),
// L(40) (a delete), L(50) (an insert). Rows go in out of order; the read must sort them.
class SimChangeReadTest : public ::testing::Test {
 protected:
  SimChangeReadTest() : db_(dir_.File("cdc.db")) {
    const auto orders = db_.AddTable("dbo", "orders", {{"id", "int", 1}, {"note", "nvarchar(20)"}});
    db_.EnableCdc("dbo_orders", orders, L(10));
    db_.AddCommit(L(10), "2024-03-01 10:00:00.000");
    db_.AddCommit(L(20), "2024-03-01 10:00:30.000", /*idle=*/true);
    db_.AddCommit(L(30), "2024-03-01 10:01:00.003");
    db_.AddCommit(L(40), "2024-03-01 10:02:00.007");
    db_.AddCommit(L(50), "2024-03-01 10:03:00.000");
    db_.AddChange("dbo_orders", L(50), L(51), 2, 1, {std::int64_t{3}, "c"});
    db_.AddChange("dbo_orders", L(30), L(31), 4, 1, {std::int64_t{1}, "a2"});
    db_.AddChange("dbo_orders", L(10), L(11), 2, 2, {std::int64_t{1}, "a"});
    db_.AddChange("dbo_orders", L(40), L(41), 1, 1, {std::int64_t{2}, "b"});
    // The second statement of L(10) has the lower seqval: command id orders first.
    db_.AddChange("dbo_orders", L(10), L(12), 2, 1, {std::int64_t{2}, "b"});
    db_.AddChange("dbo_orders", L(30), L(31), 3, 1, {std::int64_t{1}, "a"});
  }

  std::shared_ptr<arrow::RecordBatch> Read(const Lsn& from, const Lsn& to,
                                           const SourceClock& clock = SourceClock::Utc()) {
    ChangeReadRequest request;
    request.capture_instance = "dbo_orders";
    request.from = from;
    request.to = to;
    auto reader = OpenSimSource(db_.path())->ReadChanges(request, clock);
    return ReadAll(*reader);
  }

  TempDir dir_;
  SimFixture db_;
};

TEST_F(SimChangeReadTest, WholeRangeInOrderWithMetadata) {
  const auto batch = Read(L(10), L(50));
  ASSERT_EQ(batch->num_rows(), 6);
  EXPECT_EQ(batch->schema()->ToString(),
            "_capture_instance: string\n_start_lsn: string\n_seqval: string\n"
            "_operation: int32\n_command_id: int32\n_commit_ts: timestamp[us]\n"
            "id: int32\nnote: string");
  EXPECT_THAT(Strings(*batch, "_capture_instance"), ::testing::Each("dbo_orders"));
  EXPECT_THAT(Strings(*batch, "_start_lsn"),
              ElementsAre(Hex(10), Hex(10), Hex(30), Hex(30), Hex(40), Hex(50)));
  EXPECT_EQ(Strings(*batch, "_start_lsn")[0], "0x0000000000000000000A");
  EXPECT_THAT(Strings(*batch, "_seqval"),
              ElementsAre(Hex(12), Hex(11), Hex(31), Hex(31), Hex(41), Hex(51)));
  EXPECT_THAT(Ints<arrow::Int32Array>(*batch, "_operation"), ElementsAre(2, 2, 3, 4, 1, 2));
  EXPECT_THAT(Ints<arrow::Int32Array>(*batch, "_command_id"), ElementsAre(1, 2, 1, 1, 1, 1));
  EXPECT_THAT(Ints<arrow::TimestampArray>(*batch, "_commit_ts"),
              ElementsAre(Micros("2024-03-01 10:00:00"), Micros("2024-03-01 10:00:00"),
                          Micros("2024-03-01 10:01:00.003"), Micros("2024-03-01 10:01:00.003"),
                          Micros("2024-03-01 10:02:00.007"), Micros("2024-03-01 10:03:00")));
  EXPECT_THAT(Ints<arrow::Int32Array>(*batch, "id"), ElementsAre(2, 1, 1, 1, 2, 3));
  EXPECT_THAT(Strings(*batch, "note"), ElementsAre("b", "a", "a", "a2", "b", "c"));
}

TEST_F(SimChangeReadTest, BoundsAreInclusiveAndNothingOutsideIsRead) {
  const auto middle = Read(L(30), L(40));
  EXPECT_THAT(Strings(*middle, "_start_lsn"), ElementsAre(Hex(30), Hex(30), Hex(40)));
  const auto from_inside = Read(L(31), L(50));
  EXPECT_THAT(Strings(*from_inside, "_start_lsn"), ElementsAre(Hex(40), Hex(50)));
  const auto to_inside = Read(L(10), L(29));
  EXPECT_THAT(Strings(*to_inside, "_start_lsn"), ElementsAre(Hex(10), Hex(10)));
  const auto single = Read(L(50), L(50));
  EXPECT_THAT(Strings(*single, "_start_lsn"), ElementsAre(Hex(50)));
  EXPECT_EQ(Read(L(11), L(29))->num_rows(), 0);  // only an idle entry in between
  EXPECT_EQ(Read(L(51), L(1000))->num_rows(), 0);
  EXPECT_EQ(Read(L(40), L(30))->num_rows(), 0);
}

TEST_F(SimChangeReadTest, EmptyRangeGivesNoBatchButTheSchema) {
  ChangeReadRequest request;
  request.capture_instance = "dbo_orders";
  request.from = L(11);
  request.to = L(29);
  auto reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
  EXPECT_EQ(reader->schema()->num_fields(), 8);
  EXPECT_TRUE(testing::Drain(*reader).empty());
}

TEST_F(SimChangeReadTest, CommitTimesConvertedWithTheSourceClock) {
  const auto batch = Read(L(30), L(40), SourceClock::FixedOffset(-180));  // UTC-03:00
  EXPECT_THAT(Ints<arrow::TimestampArray>(*batch, "_commit_ts"),
              ElementsAre(Micros("2024-03-01 13:01:00.003"), Micros("2024-03-01 13:01:00.003"),
                          Micros("2024-03-01 13:02:00.007")));
  const auto east = Read(L(10), L(10), SourceClock::FixedOffset(330));  // UTC+05:30
  EXPECT_THAT(Ints<arrow::TimestampArray>(*east, "_commit_ts"),
              ElementsAre(Micros("2024-03-01 04:30:00"), Micros("2024-03-01 04:30:00")));
}

// US Pacific falls back on 2024-11-03: 02:00 PDT becomes 01:00 PST, so 01:00-02:00 local
// comes twice. Commits in LSN order: 00:50, 01:30 and 01:50 (first pass, UTC-7), then 01:10
// and 01:20 (second pass, UTC-8), then 02:30 (UTC-8).
TEST(SimChangeReadFallBackTest, CommitsInTheRepeatedHourConvertInCommitOrder) {
  TempDir dir;
  SimFixture db(dir.File("cdc.db"), "Pacific Standard Time");
  const auto t = db.AddTable("dbo", "t", {{"id", "int", 1}});
  db.EnableCdc("dbo_t", t, L(1));
  const std::vector<std::pair<std::uint64_t, std::string>> commits = {
      {5, "2024-11-03 00:50:00.000"}, {10, "2024-11-03 01:30:00.000"},
      {20, "2024-11-03 01:50:00.000"}, {30, "2024-11-03 01:10:00.000"},
      {40, "2024-11-03 01:20:00.000"}, {50, "2024-11-03 02:30:00.000"}};
  for (const auto& [lsn, time] : commits) {
    db.AddCommit(L(lsn), time);
    db.AddChange("dbo_t", L(lsn), L(lsn + 1), 2, 1, {static_cast<std::int64_t>(lsn)});
  }
  const SourceClock clock = SourceClock::ForWindowsZone("Pacific Standard Time");
  auto read = [&](std::uint64_t from, std::uint64_t to) {
    ChangeReadRequest request;
    request.capture_instance = "dbo_t";
    request.from = L(from);
    request.to = L(to);
    auto reader = OpenSimSource(db.path())->ReadChanges(request, clock);
    return Ints<arrow::TimestampArray>(*ReadAll(*reader), "_commit_ts");
  };
  EXPECT_THAT(read(5, 50),
              ElementsAre(Micros("2024-11-03 07:50:00"), Micros("2024-11-03 08:30:00"),
                          Micros("2024-11-03 08:50:00"), Micros("2024-11-03 09:10:00"),
                          Micros("2024-11-03 09:20:00"), Micros("2024-11-03 10:30:00")));
  // A range starting in the second pass still knows it is the second pass.
  EXPECT_THAT(read(30, 40),
              ElementsAre(Micros("2024-11-03 09:10:00"), Micros("2024-11-03 09:20:00")));
  EXPECT_THAT(read(40, 50),
              ElementsAre(Micros("2024-11-03 09:20:00"), Micros("2024-11-03 10:30:00")));
  // And one starting in the first pass stays in it.
  EXPECT_THAT(read(20, 30),
              ElementsAre(Micros("2024-11-03 08:50:00"), Micros("2024-11-03 09:10:00")));
}

TEST_F(SimChangeReadTest, ChangeRowWithoutMappingEntryIsLeftOutLikeTheJoin) {
  db_.AddChange("dbo_orders", L(45), L(46), 2, 1, {std::int64_t{9}, "orphan"});
  EXPECT_THAT(Strings(*Read(L(40), L(50)), "_start_lsn"), ElementsAre(Hex(40), Hex(50)));
}

TEST_F(SimChangeReadTest, SplitsIntoBatchesOfAtMostBatchRows) {
  for (int i = 0; i < 25; ++i) {
    const std::uint64_t lsn = 100 + 2 * static_cast<std::uint64_t>(i);
    db_.AddCommit(L(lsn), "2024-03-02 00:00:00.000");
    db_.AddChange("dbo_orders", L(lsn), L(lsn + 1), 2, 1, {std::int64_t{100 + i}, nullptr});
  }
  ChangeReadRequest request;
  request.capture_instance = "dbo_orders";
  request.from = L(100);
  request.to = L(1000);
  request.batch_rows = 10;
  auto reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
  const auto batches = testing::Drain(*reader);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0]->num_rows(), 10);
  EXPECT_EQ(batches[1]->num_rows(), 10);
  EXPECT_EQ(batches[2]->num_rows(), 5);
  EXPECT_EQ(Ints<arrow::Int32Array>(*batches[1], "id").front(), 110);
  EXPECT_EQ(Ints<arrow::Int32Array>(*batches[2], "id").back(), 124);
  for (const auto& b : batches) EXPECT_TRUE(b->ValidateFull().ok());

  request.batch_rows = 25;  // exactly the row count: one batch, then the end
  reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
  EXPECT_EQ(testing::Drain(*reader).size(), 1u);

  request.batch_rows = 0;
  EXPECT_THROW(OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc()), ConfigError);
}

TEST_F(SimChangeReadTest, ChosenColumnsInRequestOrderWithoutCommandId) {
  ChangeReadRequest request;
  request.capture_instance = "DBO_ORDERS";
  request.from = L(10);
  request.to = L(30);
  request.columns = {"NOTE", "id"};
  request.include_command_id = false;
  auto reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
  const auto batch = ReadAll(*reader);
  EXPECT_EQ(batch->schema()->ToString(),
            "_capture_instance: string\n_start_lsn: string\n_seqval: string\n"
            "_operation: int32\n_commit_ts: timestamp[us]\nnote: string\nid: int32");
  EXPECT_THAT(Strings(*batch, "_capture_instance"), ::testing::Each("dbo_orders"));
  // Still in command-id order within a transaction.
  EXPECT_THAT(Strings(*batch, "note"), ElementsAre("b", "a", "a", "a2"));
}

TEST_F(SimChangeReadTest, UnknownColumnOrInstanceIsRefused) {
  ChangeReadRequest request;
  request.capture_instance = "dbo_orders";
  request.to = L(100);
  request.columns = {"id", "missing"};
  auto source = OpenSimSource(db_.path());
  try {
    source->ReadChanges(request, SourceClock::Utc());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'missing' is not captured by capture instance 'dbo_orders'"));
    EXPECT_THAT(e.what(), HasSubstr("it captures: id, note"));
  }
  request.columns = {"id", "ID"};
  EXPECT_THROW(source->ReadChanges(request, SourceClock::Utc()), ConfigError);
  request.columns = {};
  request.capture_instance = "dbo_customers";
  EXPECT_THROW(source->ReadChanges(request, SourceClock::Utc()), NotFoundError);
}

TEST_F(SimChangeReadTest, ReaderOutlivesItsSourceAndSeesOneSnapshot) {
  ChangeReadRequest request;
  request.capture_instance = "dbo_orders";
  request.from = L(10);
  request.to = L(1000);
  request.batch_rows = 2;
  std::unique_ptr<arrow::RecordBatchReader> reader;
  {
    auto source = OpenSimSource(db_.path());
    reader = source->ReadChanges(request, SourceClock::Utc());
  }
  std::shared_ptr<arrow::RecordBatch> first;
  ThrowIfError(reader->ReadNext(&first));
  ASSERT_NE(first, nullptr);
  // A commit the writer adds while the read is under way belongs to a later read.
  db_.AddCommit(L(60), "2024-03-01 10:04:00.000");
  db_.AddChange("dbo_orders", L(60), L(61), 2, 1, {std::int64_t{4}, "d"});
  std::int64_t rest = 0;
  for (const auto& b : testing::Drain(*reader)) rest += b->num_rows();
  EXPECT_EQ(first->num_rows() + rest, 6);
  EXPECT_EQ(Read(L(10), L(1000))->num_rows(), 7);
}

TEST_F(SimChangeReadTest, CorruptValueFailsTheReadWithSourceError) {
  db_.Run("UPDATE \"cdc.dbo_orders_CT\" SET id = 'seven' WHERE \"__$operation\" = 1", {});
  ChangeReadRequest request;
  request.capture_instance = "dbo_orders";
  request.to = L(1000);
  auto reader = OpenSimSource(db_.path())->ReadChanges(request, SourceClock::Utc());
  std::shared_ptr<arrow::RecordBatch> batch;
  const arrow::Status status = reader->ReadNext(&batch);
  ASSERT_FALSE(status.ok());
  try {
    ThrowIfError(status);
    FAIL() << "no error";
  } catch (const SourceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("column 'id' of cdc.dbo_orders_CT (int) holds a TEXT value"));
  }
  ThrowIfError(reader->ReadNext(&batch));  // the reader has ended
  EXPECT_EQ(batch, nullptr);
}

}  // namespace
}  // namespace mssql_cdc
