// Listing-light replay: a table with _last_checkpoint is read from that checkpoint and the
// commits after it, without a listing of _delta_log, and reaches the state a full replay does.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/errors.h"
#include "delta/snapshot.h"
#include "delta/table.h"
#include "storage/local_file_system.h"
#include "table_test_util.h"

namespace mssql_cdc::delta {
namespace {

using namespace testing_util;

// The local filesystem, counting the listings asked of it.
class CountingFileSystem final : public storage::FileSystem {
 public:
  int lists = 0;
  bool Exists(const std::string& p) override { return local_->Exists(p); }
  std::optional<std::string> ReadFile(const std::string& p) override { return local_->ReadFile(p); }
  std::vector<storage::FileInfo> List(const std::string& d) override {
    ++lists;
    return local_->List(d);
  }
  void CreateDirectories(const std::string& p) override { local_->CreateDirectories(p); }
  bool WriteIfAbsent(const std::string& p, const std::string& c) override { return local_->WriteIfAbsent(p, c); }
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

TEST(LogReplay, StartsAtTheLastCheckpointWithoutListingTheLog) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = IdNameSchema();
  DeltaTable table = DeltaTable::Create(dir.path(), options);
  for (int i = 0; i < 25; ++i) table.Append({IdNameBatch(i * 2, 2)});  // checkpoints at 10 and 20

  CountingFileSystem fs;
  const Snapshot light = ReadSnapshot(fs, dir.path());
  EXPECT_EQ(fs.lists, 0);
  EXPECT_EQ(light.version, 25);
  EXPECT_EQ(light.last_checkpoint_version, 20);
  EXPECT_EQ(light.files.size(), 25u);

  // Without _last_checkpoint the log is listed, and the state is the same.
  std::filesystem::remove(dir.Log("_last_checkpoint"));
  const Snapshot listed = ReadSnapshot(fs, dir.path());
  EXPECT_EQ(fs.lists, 1);
  EXPECT_EQ(listed.version, light.version);
  EXPECT_EQ(listed.files.size(), light.files.size());
  for (const auto& [path, add] : light.files) EXPECT_TRUE(listed.files.count(path)) << path;
}

TEST(LogReplay, AVersionBeforeTheCheckpointOrPastTheNewestIsReadByTheListingRule) {
  TempTableDir dir;
  CreateOptions options;
  options.schema = IdNameSchema();
  DeltaTable table = DeltaTable::Create(dir.path(), options);
  for (int i = 0; i < 12; ++i) table.Append({IdNameBatch(i, 1)});
  CountingFileSystem fs;
  EXPECT_EQ(ReadSnapshot(fs, dir.path(), 5).files.size(), 5u);
  EXPECT_EQ(fs.lists, 1);
  EXPECT_EQ(ReadSnapshot(fs, dir.path(), 11).files.size(), 11u);  // from the checkpoint at 10
  EXPECT_EQ(fs.lists, 1);
  EXPECT_THROW(ReadSnapshot(fs, dir.path(), 13), SourceError);
}

}  // namespace
}  // namespace mssql_cdc::delta
