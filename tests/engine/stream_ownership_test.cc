// One writer per stream (invariant 8 of docs/invariants.md) and checks before writing (invariant 9 of docs/invariants.md): a second stream
// on a checkpoint that runs is refused naming its holder, a checkpoint or a bronze table that
// does not belong with the other stops the stream before it writes, a startingLsn the stream
// could never read from and damaged checkpoint files are refused with a clear message, and an
// idle stream polls at a bounded rate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/errors.h"
#include "delta/table.h"
#include "engine/stream.h"
#include "engine/stream_checkpoint.h"
#include "source/open_source.h"
#include "tests/testing/stream_test_util.h"
#include "tests/testing/forwarding_source.h"

namespace mssql_cdc {
namespace {

namespace fs = std::filesystem;
using stream_testing::StreamTest;
using ::testing::HasSubstr;

class StreamOwnershipTest : public StreamTest {
 protected:
  // Every file under `dir` with its size and a hash of its contents: what "nothing was
  // written" compares.
  static std::map<std::string, std::string> Files(const std::string& dir) {
    std::map<std::string, std::string> files;
    if (!fs::exists(dir)) return files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string contents(std::istreambuf_iterator<char>(in), {});
      files[entry.path().string()] = std::to_string(contents.size()) + " bytes, hash " +
                                     std::to_string(std::hash<std::string>{}(contents));
    }
    return files;
  }

  // What a stream writes: its checkpoint, bronze and facts.
  std::map<std::string, std::string> Written() const {
    auto files = Files(dir_.File("checkpoint"));
    for (const char* table : {"bronze", "facts"}) files.merge(Files(dir_.File(table)));
    return files;
  }

  template <typename E>
  std::string ErrorOf(StreamConfig config) {
    try {
      RunOnce(std::move(config));
    } catch (const E& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
};

TEST_F(StreamOwnershipTest, ASecondStreamOnARunningCheckpointIsRefusedNamingTheHolder) {
  Insert(1, 3);
  StreamConfig running = Config();
  running.params.trigger = Trigger::ProcessingTime(std::chrono::milliseconds(20));
  auto first = std::make_unique<Stream>(running, nullptr);
  first->Start();
  while (first->progress().batches == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto before = Files(dir_.File("bronze"));  // caught up: the first writes no more

  Stream second(Config(), nullptr);
  try {
    second.Start();
    FAIL() << "two streams ran on one checkpoint";
  } catch (const CheckpointInUseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("process " + std::to_string(::getpid())));
    EXPECT_THAT(e.what(), HasSubstr(" since "));
    EXPECT_THAT(e.what(), HasSubstr(dir_.File("checkpoint")));
  }
  EXPECT_FALSE(second.active());
  EXPECT_EQ(Files(dir_.File("bronze")), before);

  // Once the holder is gone the checkpoint is free at once.
  first->Stop();
  first.reset();
  Insert(10, 2);
  EXPECT_NO_THROW(RunOnce(Config()));
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamOwnershipTest, ACheckpointCopiedFromAnEarlierStateStopsTheStreamBeforeItWrites) {
  Insert(1, 2);
  RunOnce(Config());
  fs::copy(dir_.File("checkpoint"), dir_.File("saved"), fs::copy_options::recursive);
  Insert(10, 2);
  RunOnce(Config());  // bronze gets batch 1; the copy stays at batch 0
  Insert(20, 2);
  fs::remove_all(dir_.File("checkpoint"));
  fs::rename(dir_.File("saved"), dir_.File("checkpoint"));
  const auto bronze = Files(dir_.File("bronze"));

  const std::string message = ErrorOf<ConfigError>(Config());
  EXPECT_THAT(message, HasSubstr("disagree about app_id 'app'"));
  // The copy's next batch is 1, which bronze holds already, over another range.
  EXPECT_THAT(message, HasSubstr("bronze's batch 1 (table version 2) read"));
  EXPECT_THAT(message, HasSubstr("where the checkpoint's batch 1 reads"));
  EXPECT_THAT(message, HasSubstr("To recover"));
  EXPECT_EQ(Files(dir_.File("bronze")), bronze);
}

TEST_F(StreamOwnershipTest, ABronzeTableRestoredFromAnOlderStateStopsTheStream) {
  Insert(1, 2);
  RunOnce(Config());
  fs::copy(dir_.File("bronze"), dir_.File("bronze_backup"), fs::copy_options::recursive);
  Insert(10, 2);
  RunOnce(Config());
  fs::remove_all(dir_.File("bronze"));
  fs::rename(dir_.File("bronze_backup"), dir_.File("bronze"));
  Insert(20, 2);

  const std::string message = ErrorOf<ConfigError>(Config());
  EXPECT_THAT(message, HasSubstr("bronze's newest batch of it is 0"));
  EXPECT_THAT(message, HasSubstr("newest committed batch that wrote rows is 1"));
}

TEST_F(StreamOwnershipTest, ABatchAnotherWriterCommittedWithAnotherRangeStopsTheStream) {
  const Lsn first = Insert(1, 2);
  RunOnce(Config());
  // Another writer with the same app_id commits its batch 1, over a range of its own.
  auto bronze = delta::DeltaTable::Open(dir_.File("bronze"));
  delta::AppendOptions options;
  options.txn = delta::Txn{"app", 1, std::nullopt};
  options.user_metadata = R"({"batch_id": 1, "app_id": "app", "start_lsn": ")" +
                          first.Decrement().ToString() + R"(", "end_lsn": ")" + first.ToString() +
                          "\"}";
  bronze.Append({}, options);
  Insert(10, 2);

  const std::string message = ErrorOf<ConfigError>(Config());
  EXPECT_THAT(message, HasSubstr("bronze's batch 1 (table version 2) read (" +
                                 first.Decrement().ToString() + ", " + first.ToString() + "]"));
}

TEST_F(StreamOwnershipTest, AReplayedBatchWhoseRangeBronzeHoldsFinishesFromBronze) {
  // The agreement check must not refuse the ordinary crash: bronze took the batch, the commit
  // marker did not land.
  Insert(1, 3);
  StreamConfig crashing = Config();
  crashing.step_hook = [](BatchStep step, std::int64_t) {
    if (step == BatchStep::kBronzeAppended) throw std::runtime_error("crash");
  };
  EXPECT_THROW(RunOnce(crashing), std::runtime_error);
  EXPECT_NO_THROW(RunOnce(Config()));
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

TEST_F(StreamOwnershipTest, AStartingLsnTheStreamCouldNeverReadFromIsRefusedBeforeWriting) {
  const Lsn last = Insert(1, 2);
  const std::string past = ErrorOf<ConfigError>(
      Config(Options{{"startingLsn", last.Increment().ToString()}}));
  EXPECT_THAT(past, HasSubstr("past the database's max LSN " + last.ToString()));
  const std::string before = ErrorOf<ConfigError>(Config(Options{{"startingLsn", "0x01"}}));
  EXPECT_THAT(before, HasSubstr("before capture instance 'dbo_items' began"));
  EXPECT_THAT(before, ::testing::Not(HasSubstr("cleanup")));
  EXPECT_FALSE(fs::exists(dir_.File("checkpoint")));
  EXPECT_FALSE(fs::exists(dir_.File("bronze")));
  EXPECT_FALSE(fs::exists(dir_.File("facts")));
  // The max LSN itself is a start: nothing new yet, later changes are read.
  EXPECT_NO_THROW(RunOnce(Config(Options{{"startingLsn", last.ToString()}})));
}

TEST_F(StreamOwnershipTest, AFreshStreamIntoABronzeAnotherStreamWroteIsRefusedBeforeWriting) {
  Insert(1, 2);
  RunOnce(Config());
  const Lsn last = Insert(10, 2);
  RunOnce(Config());
  // Another app id on a new checkpoint would read every change again from the earliest.
  fs::rename(dir_.File("checkpoint"), dir_.File("checkpoint_app"));
  const auto written = Written();
  const std::string message = ErrorOf<ConfigError>(Config({}, "app-v2"));
  EXPECT_THAT(message, HasSubstr("holds micro-batches of another stream (app_id 'app')"));
  EXPECT_THAT(message, HasSubstr("this one (app_id 'app-v2') starts afresh from the earliest change"));
  EXPECT_THAT(message, HasSubstr("give startingLsn"));
  EXPECT_EQ(Written(), written);
  EXPECT_FALSE(fs::exists(dir_.File("checkpoint")));
  // Given where to start, the new stream goes on into the same bronze.
  EXPECT_NO_THROW(RunOnce(Config(Options{{"startingLsn", last.ToString()}}, "app-v2")));
}

TEST_F(StreamOwnershipTest, DamagedCheckpointFilesAreOneClearErrorAndChangeNothing) {
  Insert(1, 2);
  RunOnce(Config());
  Insert(10, 2);
  const std::string offsets = dir_.File("checkpoint/offsets");
  for (const auto& [name, contents, expected] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"99999999999999999999.json", "{}", "out of range"},
           {"5.json", R"({"batch_id": 4, "start": {"lsn": "0x01"}, "end": {"lsn": "0x02"}})",
            "holds batch 4"},
           {"5.json", "not json", "is not a JSON object"},
           {"5.json", R"({"batch_id": 5, "start": {"lsn": "zz"}, "end": {"lsn": "0x02"}})",
            "malformed"}}) {
    const std::string path = offsets + "/" + name;
    std::ofstream(path) << contents;
    const auto before = Written();
    const std::string message = ErrorOf<SourceError>(Config());
    EXPECT_THAT(message, HasSubstr(expected)) << name;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("stoll"))) << name;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    const auto after = Written();
    for (const auto& [file, what] : after) {
      EXPECT_EQ(before.count(file) ? before.at(file) : "(absent)", what) << file;
    }
    EXPECT_EQ(after.size(), before.size()) << name;
    fs::remove(path);
  }
  EXPECT_NO_THROW(RunOnce(Config()));
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

// Counts the max-LSN questions, which every idle poll asks once.
class CountingSource : public testing::ForwardingSource {
 public:
  CountingSource(std::unique_ptr<Source> inner, std::atomic<int>& max_lsn_calls)
      : ForwardingSource(std::move(inner)), calls_(max_lsn_calls) {}
  std::optional<Lsn> MaxLsn() override {
    ++calls_;
    return ForwardingSource::MaxLsn();
  }

 private:
  std::atomic<int>& calls_;
};

TEST_F(StreamOwnershipTest, AnIdleStreamPollsAtABoundedRateEvenWithProcessingTimeZero) {
  Insert(1, 2);
  StreamConfig config = Config();
  config.params.trigger = Trigger::ProcessingTime(std::chrono::milliseconds(0));
  std::atomic<int> calls{0};
  const SourceFactory real = MakeSourceFactory(config.source);
  Stream stream(config, [&] { return std::make_unique<CountingSource>(real(), calls); });
  stream.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // caught up by then
  const int before = calls;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int polls = calls - before;
  stream.Stop();
  stream.Await();
  // One poll per 100 ms idle interval, with room for a slow machine; a spinning loop asks
  // thousands of times.
  EXPECT_LE(polls, 25);
  EXPECT_GE(polls, 3);
}

}  // namespace
}  // namespace mssql_cdc
