// Facts rows: their Arrow form (NULL for what was not measured), a round trip through a real
// Delta facts table with its exactly-once txn, and the bronze commit's userMetadata.
#include "engine/facts.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/time.h"
#include "delta/table.h"
#include "engine/table_schemas.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

UtcMicros At(const char* text) { return UtcMicros{*ParseDateTime(text)}; }

// Every field set, each to a value no other field has.
FactsRow FullRow() {
  FactsRow row;
  row.app_id = "orders";
  row.batch_id = 7;
  row.rows = 120;
  row.min_lsn = "0x0000002A000001000003";
  row.max_lsn = "0x0000002A000001F00005";
  row.min_commit_ts = At("2024-03-01 10:00:00.123456");
  row.max_commit_ts = At("2024-03-01 10:05:00.5");
  row.deletes = 10;
  row.inserts = 80;
  row.updates = 15;
  row.started_at = At("2024-03-01 10:06:00");
  row.duration_ms = 431;
  row.source_rtt_ms = 0.75;
  row.read_seconds = 1.25;
  row.read_mb = 3.5;
  row.network_wait_ms = 12;
  row.retention_watermark_ts = At("2024-02-28 10:00:00");
  row.retention_headroom_hours = 72.08;
  row.event = "data_skipped";
  row.lost_from_ts = At("2024-02-27 01:00:00");
  row.lost_to_ts = At("2024-02-28 09:00:00");
  row.source_max_commit_ts = At("2024-03-01 10:05:30");
  row.capture_lag_seconds = 2.5;
  row.ingestion_lag_seconds = 30.0;
  row.end_lsn = "0x0000002A000001F00006";
  row.end_commit_ts = At("2024-03-01 10:05:01");
  row.detail = R"({"from":"a","to":"b","certain":true})";
  row.target = "/lake/bronze/orders";
  row.written_at = At("2024-03-01 10:06:01");
  return row;
}

using testing::TempDir;

TEST(FactsBatch, HasTheFactsSchemaAndNullsForUnmeasuredFields) {
  FactsRow sparse;
  sparse.app_id = "orders";
  sparse.batch_id = 8;
  sparse.rows = 0;
  auto batch = FactsToRecordBatch({FullRow(), sparse});
  ASSERT_TRUE(batch->schema()->Equals(*FactsSchema()));
  ASSERT_EQ(batch->num_rows(), 2);
  ASSERT_TRUE(batch->ValidateFull().ok());
  for (int i = 0; i < batch->num_columns(); ++i) {
    const auto& name = batch->schema()->field(i)->name();
    EXPECT_TRUE(batch->column(i)->IsValid(0)) << name;
    bool set_in_sparse = name == "app_id" || name == "batch_id" || name == "rows";
    EXPECT_EQ(batch->column(i)->IsValid(1), set_in_sparse) << name;
  }
  EXPECT_EQ(batch->GetColumnByName("updates")->GetScalar(0).ValueOrDie()->ToString(), "15");
  EXPECT_EQ(static_cast<const arrow::TimestampArray&>(*batch->GetColumnByName("max_commit_ts"))
                .Value(0),
            At("2024-03-01 10:05:00.5").value);
  EXPECT_DOUBLE_EQ(
      static_cast<const arrow::DoubleArray&>(*batch->GetColumnByName("read_mb")).Value(0), 3.5);
  EXPECT_EQ(FactsToRecordBatch({})->num_rows(), 0);
}

TEST(FactsBatch, RoundTripsThroughADeltaFactsTableExactlyOnce) {
  TempDir dir(TempDir::Mode::kNameOnly);
  auto table = delta::DeltaTable::Create(dir.path(), FactsTableOptions());
  FactsRow sparse;
  sparse.app_id = "orders";
  sparse.batch_id = 8;
  auto batch = FactsToRecordBatch({FullRow(), sparse});

  delta::AppendOptions options;
  options.txn = delta::Txn{"orders#facts", 7, std::nullopt};
  auto first = table.Append({batch}, options);
  EXPECT_TRUE(first.written);
  EXPECT_EQ(first.rows, 2);
  auto replay = table.Append({batch}, options);
  EXPECT_FALSE(replay.written);
  EXPECT_EQ(replay.version, first.version);

  auto read = delta::DeltaTable::Open(dir.path()).Read();
  ASSERT_EQ(read->num_rows(), 2);
  ASSERT_EQ(read->num_columns(), batch->num_columns());
  for (int i = 0; i < batch->num_columns(); ++i) {
    EXPECT_EQ(read->schema()->field(i)->name(), batch->schema()->field(i)->name());
    EXPECT_TRUE(read->column(i)->Equals(arrow::ChunkedArray(batch->column(i))))
        << batch->schema()->field(i)->name() << ": " << read->column(i)->ToString();
  }
  auto selected = delta::DeltaTable::Open(dir.path()).Read({{"batch_id", "=", "8"}});
  EXPECT_EQ(selected->num_rows(), 1);
}

TEST(FactsUserMetadata, HasTheBronzeCommitKeysInOrder) {
  auto doc = nlohmann::ordered_json::parse(
      BatchUserMetadata(FullRow(), std::string("0x0000002A000000F00001")));
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"rows", "min_lsn", "max_lsn", "min_commit_ts",
                                            "max_commit_ts", "deletes", "inserts", "updates",
                                            "batch_id", "app_id", "start_lsn", "end_lsn"}));
  EXPECT_EQ(doc["start_lsn"], "0x0000002A000000F00001");
  EXPECT_EQ(doc["end_lsn"], FullRow().end_lsn.value());
  EXPECT_EQ(doc["rows"], 120);
  EXPECT_EQ(doc["min_lsn"], "0x0000002A000001000003");
  EXPECT_EQ(doc["max_lsn"], "0x0000002A000001F00005");
  EXPECT_EQ(doc["min_commit_ts"], "2024-03-01T10:00:00.123");
  EXPECT_EQ(doc["max_commit_ts"], "2024-03-01T10:05:00.500");
  EXPECT_EQ(doc["deletes"], 10);
  EXPECT_EQ(doc["inserts"], 80);
  EXPECT_EQ(doc["updates"], 15);
  EXPECT_EQ(doc["batch_id"], 7);
  EXPECT_EQ(doc["app_id"], "orders");
}

TEST(FactsUserMetadata, UnknownValuesAreNull) {
  FactsRow row;
  row.app_id = "orders";
  row.batch_id = 3;
  row.rows = 0;
  auto doc = nlohmann::json::parse(BatchUserMetadata(row, std::nullopt));
  EXPECT_EQ(doc.size(), 10u);  // no range: start_lsn and end_lsn are left out
  EXPECT_EQ(doc["rows"], 0);
  EXPECT_EQ(doc["batch_id"], 3);
  for (const char* key : {"min_lsn", "max_lsn", "min_commit_ts", "max_commit_ts", "deletes",
                          "inserts", "updates"}) {
    EXPECT_TRUE(doc[key].is_null()) << key;
  }
}

}  // namespace
}  // namespace mssql_cdc
