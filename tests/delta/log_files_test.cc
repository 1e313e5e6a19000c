// The log's building blocks: file names, action JSON as the protocol names it, and the
// checkpoint's Parquet schema.
#include "delta/log_files.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>

#include "core/errors.h"
#include "delta/actions.h"
#include "delta/checkpoint.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

TEST(LogFiles, NamesAreZeroPaddedToTwentyDigits) {
  EXPECT_EQ(CommitPath("/t", 12), "/t/_delta_log/00000000000000000012.json");
  EXPECT_EQ(CheckpointPath("/t", 10), "/t/_delta_log/00000000000000000010.checkpoint.parquet");
  EXPECT_EQ(CommitVersionOf("00000000000000000012.json"), 12);
  EXPECT_FALSE(CommitVersionOf("00000000000000000012.crc").has_value());
  EXPECT_FALSE(CommitVersionOf(".00000000000000000012.json.1234.tmp").has_value());
  EXPECT_EQ(CheckpointVersionOf("00000000000000000010.checkpoint.parquet"), 10);
  EXPECT_FALSE(CheckpointVersionOf("00000000000000000010.checkpoint.0000000001.0000000002.parquet"));
}

TEST(Actions, JsonUsesTheProtocolsNames) {
  AddFile add;
  add.path = "part-00000-x.snappy.parquet";
  add.size = 10;
  add.modification_time = 1000;
  add.stats = R"({"numRecords":1})";
  EXPECT_EQ(ToJsonLine(add),
            R"({"add":{"path":"part-00000-x.snappy.parquet","partitionValues":{},"size":10,)"
            R"("modificationTime":1000,"dataChange":true,"stats":"{\"numRecords\":1}"}})");
  EXPECT_EQ(ToJsonLine(Txn{"app", 3, 99}), R"({"txn":{"appId":"app","version":3,"lastUpdated":99}})");
  EXPECT_EQ(ToJsonLine(Protocol{}), R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})");
  RemoveFile remove;
  remove.path = "p";
  remove.deletion_timestamp = 5;
  remove.size = 7;
  EXPECT_EQ(ToJsonLine(remove),
            R"({"remove":{"path":"p","deletionTimestamp":5,"dataChange":true,)"
            R"("extendedFileMetadata":true,"partitionValues":{},"size":7}})");
}

TEST(Actions, ParsingKeepsWhatItKnowsAndNamesBadLines) {
  auto action = ParseJsonLine(
      R"({"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false,"newField":[1]}})",
      "f line 1");
  ASSERT_TRUE(action.has_value());
  EXPECT_EQ(std::get<AddFile>(*action).path, "a");
  EXPECT_FALSE(std::get<AddFile>(*action).data_change);
  EXPECT_FALSE(ParseJsonLine(R"({"domainMetadata":{"domain":"d"}})", "f").has_value());
  try {
    ParseJsonLine(R"({"add":{"path":"a"}})", "00000000000000000003.json line 2");
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("00000000000000000003.json line 2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("partitionValues"), std::string::npos);
  }
  EXPECT_THROW(ParseJsonLine("{", "f"), SourceError);

  Metadata metadata;
  metadata.id = "id";
  metadata.schema_string = "{}";
  metadata.configuration = {{"k", "v"}};
  metadata.description = "d";
  metadata.created_time = 4;
  auto back = ParseJsonLine(ToJsonLine(metadata), "f");
  EXPECT_EQ(std::get<Metadata>(*back), metadata);
}

TEST(Checkpoint, ParquetColumnsAreTheActionStructs) {
  TempTableDir dir;
  auto fs = storage::LocalFileSystem();
  fs->CreateDirectories(dir.path() + "/_delta_log");
  TableState snapshot;
  snapshot.version = 10;
  snapshot.protocol = Protocol{3, 7, {"timestampNtz"}, {"timestampNtz"}};
  snapshot.metadata.id = "11111111-2222-4333-8444-555555555555";
  snapshot.metadata.schema_string = R"({"type":"struct","fields":[]})";
  snapshot.metadata.configuration = {{"mssql_cdc.schema_version", "1"}};
  AddFile add;
  add.path = "a.parquet";
  add.size = 3;
  add.modification_time = 4;
  add.stats = R"({"numRecords":2})";
  snapshot.files["a.parquet"] = add;
  snapshot.app_versions["app"] = 8;
  RemoveFile old;
  old.path = "old.parquet";
  old.deletion_timestamp = 1;  // long expired
  snapshot.tombstones["old.parquet"] = old;

  auto last = WriteCheckpoint(*fs, dir.path(), snapshot);
  EXPECT_EQ(last.size, 4);
  EXPECT_EQ(last.num_of_add_files, 1);

  auto reader = *parquet::arrow::OpenFile(fs->OpenInputFile(CheckpointPath(dir.path(), 10)),
                                          arrow::default_memory_pool());
  std::shared_ptr<arrow::Schema> schema;
  ASSERT_TRUE(reader->GetSchema(&schema).ok());
  EXPECT_EQ(schema->field_names(), (std::vector<std::string>{"txn", "add", "remove", "metaData", "protocol"}));
  auto add_type = std::static_pointer_cast<arrow::StructType>(schema->GetFieldByName("add")->type());
  EXPECT_TRUE(add_type->GetFieldByName("partitionValues")->type()->Equals(arrow::map(arrow::utf8(), arrow::utf8())));
  EXPECT_TRUE(add_type->GetFieldByName("stats")->type()->Equals(arrow::utf8()));
  auto protocol_type = std::static_pointer_cast<arrow::StructType>(schema->GetFieldByName("protocol")->type());
  EXPECT_TRUE(protocol_type->GetFieldByName("minReaderVersion")->type()->Equals(arrow::int32()));

  auto actions = ReadCheckpoint(*fs, dir.path(), 10, &last);
  ASSERT_EQ(actions.size(), 4u);
  EXPECT_EQ(std::get<Protocol>(actions[0]), snapshot.protocol);
  EXPECT_EQ(std::get<Metadata>(actions[1]), snapshot.metadata);
  EXPECT_EQ(std::get<Txn>(actions[2]).version, 8);
  EXPECT_EQ(std::get<AddFile>(actions[3]).stats, add.stats);
  EXPECT_FALSE(std::get<AddFile>(actions[3]).data_change);

  LastCheckpoint wrong = last;
  wrong.size = 5;
  EXPECT_THROW(ReadCheckpoint(*fs, dir.path(), 10, &wrong), SourceError);
  auto pointer = nlohmann::json::parse(ReadText(dir.Log("_last_checkpoint")));
  EXPECT_EQ(pointer, nlohmann::json({{"version", 10}, {"size", 4}, {"sizeInBytes", *last.size_in_bytes},
                                     {"numOfAddFiles", 1}}));
}

TEST(Checkpoint, TombstoneRetentionReadsIntervals) {
  EXPECT_EQ(TombstoneRetentionMs({}), 7LL * 86'400'000);
  EXPECT_EQ(TombstoneRetentionMs({{"delta.deletedFileRetentionDuration", "interval 2 days"}}), 2 * 86'400'000LL);
  EXPECT_EQ(TombstoneRetentionMs({{"delta.deletedFileRetentionDuration", "interval 1 hour"}}), 3'600'000LL);
}

}  // namespace
}  // namespace mssql_cdc::delta
