// DeltaTable: create, append, exactly-once txn, checkpoints, schema evolution, lost races,
// bad logs, upserts and file:// URIs, checked against the files on disk.
#include "delta/table.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "core/errors.h"
#include "delta/checkpoint.h"
#include "storage/file_system.h"
#include "storage/store.h"
#include "delta/log_replay.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

CreateOptions IdNameOptions(StringMap properties = {}) {
  CreateOptions options;
  auto schema = IdNameSchema();
  auto commented = schema->field(1)->WithMetadata(arrow::key_value_metadata({"comment"}, {"the name"}));
  options.schema = arrow::schema({schema->field(0), commented});
  options.properties = std::move(properties);
  options.properties["mssql_cdc.schema_version"] = "1";
  options.description = "bronze of dbo.t";
  return options;
}

AppendOptions WithTxn(const std::string& app, std::int64_t version) {
  AppendOptions options;
  options.txn = Txn{app, version, std::nullopt};
  return options;
}

TEST(DeltaTableCreate, WritesProtocolMetadataAndCommitInfo) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  EXPECT_EQ(table.state().version, 0);

  auto lines = CommitLines(dir.Log(Commit(0)));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["commitInfo"]["operation"], "CREATE TABLE");
  EXPECT_EQ(lines[0]["commitInfo"]["engineInfo"].get<std::string>().rfind("mssql-cdc/", 0), 0u);
  EXPECT_EQ(lines[1]["protocol"], nlohmann::json({{"minReaderVersion", 1}, {"minWriterVersion", 2}}));
  const auto& metadata = lines[2]["metaData"];
  EXPECT_EQ(metadata["configuration"]["mssql_cdc.schema_version"], "1");
  EXPECT_EQ(metadata["description"], "bronze of dbo.t");
  EXPECT_EQ(metadata["format"], nlohmann::json({{"provider", "parquet"}, {"options", nlohmann::json::object()}}));
  EXPECT_EQ(metadata["partitionColumns"], nlohmann::json::array());
  EXPECT_EQ(metadata["id"].get<std::string>().size(), 36u);
  auto schema = nlohmann::json::parse(metadata["schemaString"].get<std::string>());
  EXPECT_EQ(schema["fields"][0], nlohmann::json({{"name", "id"}, {"type", "long"}, {"nullable", false},
                                                 {"metadata", nlohmann::json::object()}}));
  EXPECT_EQ(schema["fields"][1]["metadata"]["comment"], "the name");
}

TEST(DeltaTableCreate, SameSchemaIsANoOpAndAnotherSchemaFails) {
  TempTableDir dir;
  DeltaTable::Create(dir.path(), IdNameOptions());
  auto again = DeltaTable::Create(dir.path(), IdNameOptions());
  EXPECT_EQ(again.state().version, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(1))));

  CreateOptions other;
  other.schema = arrow::schema({arrow::field("id", arrow::utf8())});
  EXPECT_THROW(DeltaTable::Create(dir.path(), other), SchemaChangedError);
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(1))));
}

TEST(DeltaTableCreate, RejectsPropertiesItCannotHonour) {
  TempTableDir dir;
  EXPECT_THROW(DeltaTable::Create(dir.path(), IdNameOptions({{"delta.enableChangeDataFeed", "true"}})),
               ConfigError);
  EXPECT_FALSE(DeltaTable::Exists(dir.path()));
}

TEST(DeltaTableAppend, CommitsAddsWithStatsAndReplays) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  AppendOptions options;
  options.user_metadata = R"({"batch":1})";
  auto result = table.Append({IdNameBatch(0, 5), IdNameBatch(5, 5)}, options);
  EXPECT_TRUE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(result.rows, 10);
  EXPECT_EQ(result.attempts, 1);
  table.Append({IdNameBatch(10, 3)});

  auto info = ActionsNamed(dir.Log(Commit(1)), "commitInfo").at(0);
  EXPECT_EQ(info["operation"], "WRITE");
  EXPECT_EQ(info["readVersion"], 0);
  EXPECT_EQ(info["isBlindAppend"], true);
  EXPECT_EQ(info["userMetadata"], R"({"batch":1})");
  EXPECT_EQ(info["operationMetrics"]["numOutputRows"], "10");
  auto adds = ActionsNamed(dir.Log(Commit(1)), "add");
  ASSERT_EQ(adds.size(), static_cast<std::size_t>(result.files));
  auto stats = nlohmann::json::parse(adds[0]["stats"].get<std::string>());
  EXPECT_EQ(stats["numRecords"], 10);
  EXPECT_TRUE(adds[0]["dataChange"].get<bool>());

  auto reopened = DeltaTable::Open(dir.path());
  EXPECT_EQ(reopened.state().version, 2);
  auto rows = reopened.Read();
  EXPECT_EQ(rows->num_rows(), 13);
  EXPECT_EQ(SumInt64(rows, "id"), 12 * 13 / 2);
  auto filtered = reopened.Read({{"id", ">=", "10"}});
  EXPECT_EQ(filtered->num_rows(), 3);
}

TEST(DeltaTableAppend, ReplayedTxnWritesNothingAndNamesTheHoldingVersion) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  EXPECT_EQ(table.Append({IdNameBatch(0, 2)}, WithTxn("stream-a", 1)).version, 1);
  table.Append({IdNameBatch(100, 1)});  // another writer's commit in between
  EXPECT_EQ(table.Append({IdNameBatch(2, 2)}, WithTxn("stream-a", 2)).version, 3);
  int data_files = CountFilesEndingWith(dir.path(), ".parquet");

  auto replay = table.Append({IdNameBatch(0, 2)}, WithTxn("stream-a", 1));
  EXPECT_FALSE(replay.written);
  EXPECT_EQ(replay.version, 1);
  auto replay2 = DeltaTable::Open(dir.path()).Append({IdNameBatch(2, 2)}, WithTxn("stream-a", 2));
  EXPECT_FALSE(replay2.written);
  EXPECT_EQ(replay2.version, 3);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), data_files);
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(4))));

  auto txn = ActionsNamed(dir.Log(Commit(3)), "txn").at(0);
  EXPECT_EQ(txn["appId"], "stream-a");
  EXPECT_EQ(txn["version"], 2);
  EXPECT_TRUE(txn.contains("lastUpdated"));
  EXPECT_EQ(DeltaTable::Open(dir.path()).state().app_versions.at("stream-a"), 2);
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 5);
}

TEST(DeltaTableAppend, EmptyBatchWithTxnRecordsProgressOnly) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  auto result = table.Append({}, WithTxn("s", 7));
  EXPECT_TRUE(result.written);
  EXPECT_EQ(result.files, 0);
  EXPECT_EQ(table.state().app_versions.at("s"), 7);
  EXPECT_FALSE(table.Append({}).written);
  EXPECT_EQ(table.state().version, 1);
}

TEST(DeltaTableCheckpoint, EveryTenCommitsAndReplayMatchesTheJsonLog) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  for (int i = 1; i <= 26; ++i) {
    table.Append({IdNameBatch(i * 10, 2)}, WithTxn(i % 2 ? "odd" : "even", i));
  }
  EXPECT_TRUE(std::filesystem::exists(dir.Log("00000000000000000010.checkpoint.parquet")));
  EXPECT_TRUE(std::filesystem::exists(dir.Log("00000000000000000020.checkpoint.parquet")));
  EXPECT_FALSE(std::filesystem::exists(dir.Log("00000000000000000025.checkpoint.parquet")));
  auto last = nlohmann::json::parse(ReadText(dir.Log("_last_checkpoint")));
  EXPECT_EQ(last["version"], 20);
  EXPECT_EQ(last["numOfAddFiles"], 20);
  EXPECT_EQ(last["size"], 20 + 2 + 2);  // adds, protocol + metaData, two txns
  EXPECT_EQ(last["sizeInBytes"],
            std::filesystem::file_size(dir.Log("00000000000000000020.checkpoint.parquet")));

  auto fs = storage::LocalFileSystem();
  TableState with_checkpoint = ReplayLog(*fs, dir.path());
  EXPECT_EQ(with_checkpoint.last_checkpoint_version, 20);
  // The same log without checkpoints, replayed from the JSON commits alone.
  TempTableDir json_only;
  std::filesystem::create_directories(json_only.path() + "/_delta_log");
  for (int v = 0; v <= 26; ++v) {
    std::filesystem::copy_file(dir.Log(Commit(v)), json_only.Log(Commit(v)));
  }
  TableState from_json = ReplayLog(*fs, json_only.path());
  EXPECT_EQ(from_json.last_checkpoint_version, -1);
  EXPECT_EQ(with_checkpoint.version, from_json.version);
  EXPECT_EQ(with_checkpoint.protocol, from_json.protocol);
  EXPECT_EQ(with_checkpoint.metadata, from_json.metadata);
  EXPECT_EQ(with_checkpoint.app_versions, from_json.app_versions);
  ASSERT_EQ(with_checkpoint.files.size(), from_json.files.size());
  for (const auto& [path, add] : from_json.files) {
    ASSERT_TRUE(with_checkpoint.files.count(path)) << path;
    EXPECT_EQ(with_checkpoint.files.at(path).size, add.size);
    EXPECT_EQ(with_checkpoint.files.at(path).stats, add.stats);
  }
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 52);

  // Time travel before the newest checkpoint starts from the older one.
  TableState at_15 = ReplayLog(*fs, dir.path(), 15);
  EXPECT_EQ(at_15.last_checkpoint_version, 10);
  EXPECT_EQ(at_15.files.size(), 15u);
}

// Records which listings a replay asks for, passing every call to the local filesystem.
class ListingRecorder final : public storage::FileSystem {
 public:
  std::vector<std::string> calls;  // "List <dir>" or "ListAfter <dir> <after>"

  bool Exists(const std::string& p) override { return local_->Exists(p); }
  std::optional<std::string> ReadFile(const std::string& p) override { return local_->ReadFile(p); }
  std::vector<storage::FileInfo> List(const std::string& d) override {
    calls.push_back("List " + d);
    return local_->List(d);
  }
  std::vector<storage::FileInfo> ListAfter(const std::string& d, const std::string& a) override {
    calls.push_back("ListAfter " + d + " " + a);
    return local_->ListAfter(d, a);
  }
  void CreateDirectories(const std::string& p) override { local_->CreateDirectories(p); }
  bool WriteIfAbsent(const std::string& p, const std::string& c) override {
    return local_->WriteIfAbsent(p, c);
  }
  void WriteAtomic(const std::string& p, const std::string& c) override { local_->WriteAtomic(p, c); }
  void Delete(const std::string& p) override { local_->Delete(p); }
  storage::FileInfo Stat(const std::string& p) override { return local_->Stat(p); }
  std::shared_ptr<arrow::io::OutputStream> OpenOutputStream(const std::string& p) override {
    return local_->OpenOutputStream(p);
  }
  std::shared_ptr<arrow::io::RandomAccessFile> OpenInputFile(const std::string& p) override {
    return local_->OpenInputFile(p);
  }

 private:
  std::shared_ptr<storage::FileSystem> local_ = storage::LocalFileSystem();
};

TEST(DeltaTableCheckpoint, ReplayListsOnlyAfterTheLastCheckpointAndStillSeesAGap) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  for (int i = 1; i <= 26; ++i) table.Append({IdNameBatch(i * 10, 2)});
  ListingRecorder fs;
  TableState snapshot = ReplayLog(fs, dir.path());
  EXPECT_EQ(snapshot.version, 26);
  EXPECT_EQ(snapshot.files.size(), 26u);
  EXPECT_EQ(fs.calls, std::vector<std::string>{"ListAfter " + dir.path() +
                                               "/_delta_log 00000000000000000020"});
  // Time travel to before that checkpoint lists the whole log.
  fs.calls.clear();
  EXPECT_EQ(ReplayLog(fs, dir.path(), 15).files.size(), 15u);
  EXPECT_EQ(fs.calls, std::vector<std::string>{"List " + dir.path() + "/_delta_log"});

  // A missing commit after the checkpoint, with a later one present, is a gap, not the end.
  std::filesystem::remove(dir.Log(Commit(23)));
  try {
    ReplayLog(fs, dir.path());
    FAIL() << "a gap after the checkpoint was read as the end of the log";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find(Commit(23) + " is missing"), std::string::npos)
        << e.what();
  }
  // And a checkpoint _last_checkpoint names must be there.
  std::filesystem::remove(dir.Log("00000000000000000020.checkpoint.parquet"));
  try {
    ReplayLog(fs, dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("names it"), std::string::npos) << e.what();
  }
}

TEST(DeltaTableCheckpoint, KeepsRecentTombstones) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  table.Append({IdNameBatch(0, 1)});
  auto rows = arrow::Table::Make(IdNameSchema(), IdNameBatch(0, 1)->columns());
  for (int i = 2; i <= 10; ++i) table.UpsertByKey("id", rows);
  auto snapshot = ReplayLog(*storage::LocalFileSystem(), dir.path());
  EXPECT_EQ(snapshot.last_checkpoint_version, 10);
  EXPECT_EQ(snapshot.files.size(), 1u);
  EXPECT_EQ(snapshot.tombstones.size(), 9u);
}

class DeltaTableSchemaEvolution : public ::testing::Test {
 protected:
  static std::shared_ptr<arrow::RecordBatch> WithExtra(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                       const std::string& name,
                                                       std::shared_ptr<arrow::Array> column) {
    return *batch->AddColumn(batch->num_columns(), arrow::field(name, column->type()), column);
  }
  TempTableDir dir_;
};

TEST_F(DeltaTableSchemaEvolution, NewColumnIsAppendedAndOldRowsReadNull) {
  auto table = DeltaTable::Create(dir_.path(), IdNameOptions());
  table.Append({IdNameBatch(0, 2)});
  arrow::Int32Builder extra;
  ASSERT_TRUE(extra.AppendValues({7, 8}).ok());
  table.Append({WithExtra(IdNameBatch(2, 2), "score", *extra.Finish())});

  auto metadata = ActionsNamed(dir_.Log(Commit(2)), "metaData");
  ASSERT_EQ(metadata.size(), 1u);
  auto schema = DeltaTable::Open(dir_.path()).state().schema();
  ASSERT_EQ(schema->num_fields(), 3);
  EXPECT_EQ(schema->field(2)->name(), "score");
  EXPECT_TRUE(schema->field(2)->nullable());
  auto rows = DeltaTable::Open(dir_.path()).Read();
  EXPECT_EQ(rows->GetColumnByName("score")->null_count(), 2);

  // A batch without the new column fills it with NULL; no metaData action.
  table.Append({IdNameBatch(4, 1)});
  EXPECT_TRUE(ActionsNamed(dir_.Log(Commit(3)), "metaData").empty());

  AppendOptions strict;
  strict.merge_schema = false;
  ASSERT_TRUE(extra.AppendValues({1, 2}).ok());
  EXPECT_THROW(table.Append({WithExtra(IdNameBatch(5, 2), "other", *extra.Finish())}, strict),
               SchemaChangedError);
}

TEST_F(DeltaTableSchemaEvolution, WideningNeedsTheProperty) {
  CreateOptions options;
  options.schema = arrow::schema({arrow::field("id", arrow::int32())});
  auto table = DeltaTable::Create(dir_.path(), options);
  arrow::Int64Builder wide;
  ASSERT_TRUE(wide.Append(1LL << 40).ok());
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), 1,
                                        {*wide.Finish()});
  try {
    table.Append({batch});
    FAIL() << "widening without the property must fail";
  } catch (const SchemaChangedError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'id'"), std::string::npos) << message;
    EXPECT_NE(message.find("integer"), std::string::npos) << message;
    EXPECT_NE(message.find("long"), std::string::npos) << message;
    EXPECT_NE(message.find("SET TBLPROPERTIES ('delta.enableTypeWidening'='true')"),
              std::string::npos)
        << message;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Log(Commit(1))));
  EXPECT_EQ(CountFilesEndingWith(dir_.path(), ".parquet"), 0);

  // A narrower incoming type is cast to the table's, with no schema change.
  arrow::Int16Builder narrow;
  ASSERT_TRUE(narrow.Append(3).ok());
  table.Append({arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int16())}), 1,
                                         {*narrow.Finish()})});
  EXPECT_TRUE(ActionsNamed(dir_.Log(Commit(1)), "metaData").empty());
}

TEST_F(DeltaTableSchemaEvolution, WideningWithThePropertyRecordsTypeChanges) {
  CreateOptions options;
  options.schema = arrow::schema({arrow::field("id", arrow::int32())});
  options.properties = {{"delta.enableTypeWidening", "true"}};
  auto table = DeltaTable::Create(dir_.path(), options);
  auto protocol = ActionsNamed(dir_.Log(Commit(0)), "protocol").at(0);
  EXPECT_EQ(protocol["minReaderVersion"], 3);
  EXPECT_EQ(protocol["minWriterVersion"], 7);
  EXPECT_EQ(protocol["readerFeatures"], nlohmann::json({"typeWidening"}));
  EXPECT_EQ(protocol["writerFeatures"], nlohmann::json({"appendOnly", "invariants", "typeWidening"}));

  arrow::Int32Builder small;
  ASSERT_TRUE(small.Append(5).ok());
  table.Append({arrow::RecordBatch::Make(options.schema, 1, {*small.Finish()})});
  arrow::Int64Builder wide;
  ASSERT_TRUE(wide.Append(1LL << 40).ok());
  table.Append({arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), 1,
                                         {*wide.Finish()})});

  auto metadata = ActionsNamed(dir_.Log(Commit(2)), "metaData").at(0);
  auto field = nlohmann::json::parse(metadata["schemaString"].get<std::string>())["fields"][0];
  EXPECT_EQ(field["type"], "long");
  EXPECT_EQ(field["metadata"]["delta.typeChanges"],
            nlohmann::json::parse(R"([{"fromType":"integer","toType":"long"}])"));
  auto rows = DeltaTable::Open(dir_.path()).Read();
  EXPECT_EQ(SumInt64(rows, "id"), 5 + (1LL << 40));

  // An unrelated type change is never allowed.
  arrow::StringBuilder text;
  ASSERT_TRUE(text.Append("x").ok());
  EXPECT_THROW(table.Append({arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::utf8())}),
                                                      1, {*text.Finish()})}),
               SchemaChangedError);
}

TEST(DeltaTableProtocol, TimestampNtzNeedsTableFeatures) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = arrow::schema({arrow::field("at", arrow::timestamp(arrow::TimeUnit::MICRO)),
                                  arrow::field("utc", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))});
  DeltaTable::Create(dir.path(), options);
  auto protocol = ActionsNamed(dir.Log(Commit(0)), "protocol").at(0);
  EXPECT_EQ(protocol["minReaderVersion"], 3);
  EXPECT_EQ(protocol["readerFeatures"], nlohmann::json({"timestampNtz"}));
  // Writer version 2's features stay listed, as Spark lists them.
  EXPECT_EQ(protocol["writerFeatures"], nlohmann::json({"appendOnly", "invariants", "timestampNtz"}));
  auto schema = nlohmann::json::parse(
      ActionsNamed(dir.Log(Commit(0)), "metaData").at(0)["schemaString"].get<std::string>());
  EXPECT_EQ(schema["fields"][0]["type"], "timestamp_ntz");
  EXPECT_EQ(schema["fields"][1]["type"], "timestamp");
}

TEST(DeltaTableRace, BlindAppendRetriesAtTheNextVersion) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  // Another writer's commit lands while this one writes its data: a txn-only blind commit.
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(1)),
      R"({"commitInfo":{"timestamp":1,"operation":"WRITE"}})" "\n"
      R"({"txn":{"appId":"other","version":9}})" "\n");
  auto result = table.Append({BigBatch(0)});
  ASSERT_TRUE(winner.get());
  EXPECT_TRUE(result.written);
  EXPECT_EQ(result.version, 2);
  EXPECT_EQ(result.attempts, 2);
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(2)), "commitInfo").at(0)["readVersion"], 0);
  EXPECT_EQ(table.state().app_versions.at("other"), 9);
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 300'000);
}

TEST(DeltaTableRace, WinnerHoldingOurTxnMeansAlreadyWritten) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(1)),
      R"({"commitInfo":{"timestamp":1,"operation":"WRITE"}})" "\n"
      R"({"txn":{"appId":"stream","version":5}})" "\n");
  auto result = table.Append({BigBatch(0)}, WithTxn("stream", 4));
  ASSERT_TRUE(winner.get());
  EXPECT_FALSE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(2))));
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 0);  // its data files are gone
}

TEST(DeltaTableRace, WinnerChangingTheSchemaFailsTheCommit) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  auto metadata = ActionsNamed(dir.Log(Commit(0)), "metaData").at(0);
  auto schema = nlohmann::json::parse(metadata["schemaString"].get<std::string>());
  schema["fields"].push_back({{"name", "score"}, {"type", "integer"}, {"nullable", true},
                              {"metadata", nlohmann::json::object()}});
  metadata["schemaString"] = schema.dump();
  auto winner = WinRaceWhenDataFileAppears(dir.path(), dir.Log(Commit(1)),
                                           nlohmann::json({{"metaData", metadata}}).dump() + "\n");
  try {
    table.Append({BigBatch(0)});
    FAIL() << "a concurrent schema change must fail the append";
  } catch (const ConcurrentModificationError& e) {
    EXPECT_NE(std::string(e.what()).find("version 1"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ErrorCode::kConcurrentModification);
  }
  ASSERT_TRUE(winner.get());
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(2))));
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 0);
}

TEST(DeltaTableRace, StaleObjectCatchesUpBeforeWriting) {
  TempTableDir dir;
  auto mine = DeltaTable::Create(dir.path(), IdNameOptions());
  auto theirs = DeltaTable::Open(dir.path());
  theirs.Append({IdNameBatch(0, 2)}, WithTxn("stream", 4));
  auto result = mine.Append({IdNameBatch(0, 2)}, WithTxn("stream", 4));
  EXPECT_FALSE(result.written);
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(mine.Append({IdNameBatch(2, 1)}).version, 2);
}

TEST(DeltaTableRace, ConcurrentWritersLoseNothingAndDuplicateNothing) {
  TempTableDir dir;
  DeltaTable::Create(dir.path(), IdNameOptions());
  constexpr int kAppends = 40;
  auto writer = [&](std::int64_t first) {
    auto table = DeltaTable::Open(dir.path());
    int attempts = 0;
    for (int i = 0; i < kAppends; ++i) {
      attempts += table.Append({IdNameBatch(first + i, 1)}, WithTxn("w" + std::to_string(first), i)).attempts;
    }
    return attempts;
  };
  auto a = std::async(std::launch::async, writer, 0);
  auto b = std::async(std::launch::async, writer, 1000);
  a.get();
  b.get();
  auto table = DeltaTable::Open(dir.path());
  EXPECT_EQ(table.state().version, 2 * kAppends);
  auto rows = table.Read();
  EXPECT_EQ(rows->num_rows(), 2 * kAppends);
  EXPECT_EQ(SumInt64(rows, "id"), 2 * (kAppends * (kAppends - 1) / 2) + 1000 * kAppends);
  EXPECT_EQ(table.state().app_versions.at("w0"), kAppends - 1);
  EXPECT_EQ(table.state().app_versions.at("w1000"), kAppends - 1);
}

TEST(DeltaTableBadLog, NotATableIsAnErrorNamingThePath) {
  TempTableDir dir;
  EXPECT_FALSE(DeltaTable::Exists(dir.path()));
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path()), std::string::npos) << e.what();
  }
}

TEST(DeltaTableBadLog, CorruptCommitIsNamedAndNothingIsWritten) {
  TempTableDir dir;
  auto stale = DeltaTable::Create(dir.path(), IdNameOptions());
  DeltaTable::Open(dir.path()).Append({IdNameBatch(0, 1)});
  WriteText(dir.Log(Commit(1)), "{\"add\": {\"path\": \n");
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find(Commit(1)), std::string::npos) << e.what();
  }
  int files = CountFilesEndingWith(dir.path(), ".parquet");
  EXPECT_THROW(stale.Append({IdNameBatch(5, 1)}), SourceError);
  EXPECT_FALSE(std::filesystem::exists(dir.Log(Commit(2))));
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), files);
}

TEST(DeltaTableBadLog, MissingCommitIsNamed) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  for (int i = 0; i < 3; ++i) table.Append({IdNameBatch(i, 1)});
  std::filesystem::remove(dir.Log(Commit(2)));
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find(Commit(2)), std::string::npos) << e.what();
  }
}

TEST(DeltaTableBadLog, LastCheckpointThatIsNotJsonOrDoesNotMatch) {
  TempTableDir dir;
  auto table = DeltaTable::Create(dir.path(), IdNameOptions());
  for (int i = 0; i < 10; ++i) table.Append({IdNameBatch(i, 1)});
  std::string pointer = ReadText(dir.Log("_last_checkpoint"));

  WriteText(dir.Log("_last_checkpoint"), "{not json");
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("_last_checkpoint"), std::string::npos) << e.what();
  }

  auto wrong = nlohmann::json::parse(pointer);
  wrong["numOfAddFiles"] = 3;
  WriteText(dir.Log("_last_checkpoint"), wrong.dump());
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("00000000000000000010.checkpoint.parquet"),
              std::string::npos)
        << e.what();
  }

  WriteText(dir.Log("_last_checkpoint"), pointer);
  std::filesystem::remove(dir.Log("00000000000000000010.checkpoint.parquet"));
  EXPECT_THROW(DeltaTable::Open(dir.path()), SourceError);

  WriteText(dir.Log("00000000000000000010.checkpoint.parquet"), "not parquet at all");
  try {
    DeltaTable::Open(dir.path());
    FAIL();
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("00000000000000000010.checkpoint.parquet"),
              std::string::npos)
        << e.what();
  }
}

std::shared_ptr<arrow::Table> ControlRows(const std::vector<std::pair<std::string, std::int64_t>>& rows) {
  arrow::StringBuilder names;
  arrow::Int64Builder values;
  for (const auto& [name, value] : rows) {
    EXPECT_TRUE(names.Append(name).ok());
    EXPECT_TRUE(values.Append(value).ok());
  }
  auto schema = arrow::schema({arrow::field("table_name", arrow::utf8(), false),
                               arrow::field("value", arrow::int64())});
  return arrow::Table::Make(schema, {*names.Finish(), *values.Finish()});
}

std::map<std::string, std::int64_t> ControlContents(const std::shared_ptr<arrow::Table>& table) {
  std::map<std::string, std::int64_t> contents;
  auto combined = *table->CombineChunks();
  if (combined->num_rows() == 0) return contents;
  const auto& names = static_cast<const arrow::StringArray&>(*combined->GetColumnByName("table_name")->chunk(0));
  const auto& values = static_cast<const arrow::Int64Array&>(*combined->GetColumnByName("value")->chunk(0));
  for (std::int64_t i = 0; i < combined->num_rows(); ++i) contents[names.GetString(i)] = values.Value(i);
  return contents;
}

TEST(DeltaTableUpsert, ReplacesRowsByKeyInOneCommit) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = ControlRows({})->schema();
  auto table = DeltaTable::Create(dir.path(), options);
  table.UpsertByKey("table_name", ControlRows({{"a", 1}, {"b", 2}}));
  auto result = table.UpsertByKey("table_name", ControlRows({{"b", 20}, {"c", 3}}));
  EXPECT_TRUE(result.written);
  EXPECT_EQ(result.version, 2);
  EXPECT_EQ(result.rows, 3);

  auto removes = ActionsNamed(dir.Log(Commit(2)), "remove");
  ASSERT_EQ(removes.size(), 1u);
  EXPECT_TRUE(removes[0].contains("deletionTimestamp"));
  EXPECT_EQ(ActionsNamed(dir.Log(Commit(2)), "add").size(), 1u);
  auto info = ActionsNamed(dir.Log(Commit(2)), "commitInfo").at(0);
  EXPECT_EQ(info["operation"], "MERGE");
  EXPECT_EQ(info["isBlindAppend"], false);

  auto reopened = DeltaTable::Open(dir.path());
  EXPECT_EQ(reopened.state().files.size(), 1u);
  EXPECT_EQ(ControlContents(reopened.Read()),
            (std::map<std::string, std::int64_t>{{"a", 1}, {"b", 20}, {"c", 3}}));

  EXPECT_THROW(table.UpsertByKey("table_name", ControlRows({{"x", 1}, {"x", 2}})), ConfigError);
  EXPECT_THROW(table.UpsertByKey("nope", ControlRows({{"x", 1}})), ConfigError);
}

TEST(DeltaTableUpsert, LostRaceIsRecomputedOnTheNewSnapshot) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = ControlRows({})->schema();
  auto table = DeltaTable::Create(dir.path(), options);
  table.UpsertByKey("table_name", ControlRows({{"a", 1}}));
  auto winner = WinRaceWhenDataFileAppears(
      dir.path(), dir.Log(Commit(2)),
      R"({"commitInfo":{"timestamp":1,"operation":"WRITE"}})" "\n"
      R"({"txn":{"appId":"other","version":1}})" "\n");
  // Enough rows that the racing thread commits while this upsert writes its file.
  std::vector<std::pair<std::string, std::int64_t>> upserted = {{"a", 10}};
  for (int i = 0; i < 300'000; ++i) upserted.emplace_back("k" + std::to_string(i), i);
  auto result = table.UpsertByKey("table_name", ControlRows(upserted));
  ASSERT_TRUE(winner.get());
  EXPECT_EQ(result.version, 3);
  EXPECT_EQ(result.attempts, 2);
  EXPECT_EQ(CountFilesEndingWith(dir.path(), ".parquet"), 2);  // the first try's file is gone
  auto contents = ControlContents(DeltaTable::Open(dir.path()).Read());
  EXPECT_EQ(contents.size(), 300'001u);
  EXPECT_EQ(contents["a"], 10);
  EXPECT_EQ(contents["k299999"], 299'999);
}

TEST(DeltaTableUpsert, ConcurrentUpsertsKeepEveryKey) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = ControlRows({})->schema();
  DeltaTable::Create(dir.path(), options);
  auto writer = [&](const std::string& prefix) {
    auto table = DeltaTable::Open(dir.path());
    for (int i = 0; i < 15; ++i) table.UpsertByKey("table_name", ControlRows({{prefix + std::to_string(i % 5), i}}));
  };
  auto a = std::async(std::launch::async, writer, "a");
  auto b = std::async(std::launch::async, writer, "b");
  a.get();
  b.get();
  auto contents = ControlContents(DeltaTable::Open(dir.path()).Read());
  EXPECT_EQ(contents.size(), 10u);
  EXPECT_EQ(contents["a4"], 14);
  EXPECT_EQ(contents["b0"], 10);
}

TEST(DeltaTableUri, FileUrisAndPlainPathsNameTheSameTable) {
  TempTableDir dir;
  DeltaTable::Create("file://" + dir.path(), IdNameOptions()).Append({IdNameBatch(0, 4)});
  EXPECT_TRUE(DeltaTable::Exists(dir.path()));
  EXPECT_EQ(DeltaTable::Open(dir.path()).Read()->num_rows(), 4);
  EXPECT_EQ(DeltaTable::Open("file:" + dir.path()).state().version, 1);
  EXPECT_THROW(DeltaTable::Open("hdfs://namenode/table"), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc::delta
