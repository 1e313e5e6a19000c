// A SQL Server that restarts for a fraction of a second during any phase of a batch costs the
// stream a retry, never the run: the odbc backend, through unixODBC and FreeTDS, reconnects
// to `sim serve` (in process) and bronze ends equal to the change table, row for row. The
// restart is set off from inside the stream's own calls, so each phase is hit exactly.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "engine/stream.h"
#include "source/open_source.h"
#include "tests/testing/stream_test_util.h"
#include "tests/testing/forwarding_source.h"

namespace mssql_cdc::stream_testing {
namespace {

enum class Phase { kPlanning, kRetentionCheck, kSplitting, kReading, kBetweenRanges, kBetweenBatches };

std::string PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kPlanning: return "Planning";
    case Phase::kRetentionCheck: return "RetentionCheck";
    case Phase::kSplitting: return "Splitting";
    case Phase::kReading: return "Reading";
    case Phase::kBetweenRanges: return "BetweenRanges";
    case Phase::kBetweenBatches: return "BetweenBatches";
  }
  return "?";
}

// Takes the server down once, and serves again after `down` on a thread of its own, so the
// call that set it off meets a dead connection and must retry.
class Outage {
 public:
  explicit Outage(testing::ServedSim& served) : served_(served) {}
  ~Outage() {
    if (thread_.joinable()) thread_.join();
  }
  void Begin() {
    std::lock_guard lock(mu_);
    if (fired_) return;
    fired_ = true;
    served_.Stop();
    thread_ = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      served_.Start();
    });
  }
  bool fired() {
    std::lock_guard lock(mu_);
    return fired_;
  }

 private:
  testing::ServedSim& served_;
  std::mutex mu_;
  bool fired_ = false;
  std::thread thread_;
};

// A record batch reader that sets off the outage after its first batch (kReading) or at its
// end (kBetweenRanges).
class OutageReader : public arrow::RecordBatchReader {
 public:
  OutageReader(std::unique_ptr<arrow::RecordBatchReader> inner, Outage& outage, Phase phase)
      : inner_(std::move(inner)), outage_(outage), phase_(phase) {}
  std::shared_ptr<arrow::Schema> schema() const override { return inner_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    ARROW_RETURN_NOT_OK(inner_->ReadNext(batch));
    ++batches_;
    if (phase_ == Phase::kReading && batches_ == 1) outage_.Begin();
    if (phase_ == Phase::kBetweenRanges && *batch == nullptr) outage_.Begin();
    return arrow::Status::OK();
  }

 private:
  std::unique_ptr<arrow::RecordBatchReader> inner_;
  Outage& outage_;
  Phase phase_;
  int batches_ = 0;
};

// The odbc Source, with the outage set off at the first call of the phase under test (after
// the stream has started, so that the restart hits a batch).
class OutageSource : public testing::ForwardingSource {
 public:
  OutageSource(std::unique_ptr<Source> inner, Outage& outage, Phase phase,
               const std::atomic<bool>& armed)
      : ForwardingSource(std::move(inner)), outage_(outage), phase_(phase), armed_(armed) {}

  Lsn MinLsn(const std::string& ci) override {
    At(Phase::kRetentionCheck);
    return ForwardingSource::MinLsn(ci);
  }
  std::optional<Lsn> NthCommitAfter(const Lsn& after, std::int64_t n) override {
    At(Phase::kPlanning);
    return ForwardingSource::NthCommitAfter(after, n);
  }
  std::vector<SplitPoint> SplitPoints(const std::string& ci, const Lsn& from, const Lsn& to,
                                      int n) override {
    At(Phase::kSplitting);
    return ForwardingSource::SplitPoints(ci, from, to, n);
  }
  std::unique_ptr<arrow::RecordBatchReader> ReadChanges(const ChangeReadRequest& request,
                                                         const SourceClock& clock) override {
    auto reader = ForwardingSource::ReadChanges(request, clock);
    if (!armed_ || (phase_ != Phase::kReading && phase_ != Phase::kBetweenRanges)) return reader;
    return std::make_unique<OutageReader>(std::move(reader), outage_, phase_);
  }

 private:
  void At(Phase phase) {
    if (armed_ && phase == phase_) outage_.Begin();
  }
  Outage& outage_;
  Phase phase_;
  const std::atomic<bool>& armed_;
};

class ServerRestartTest : public StreamTest, public ::testing::WithParamInterface<Phase> {};

TEST_P(ServerRestartTest, ARestartDuringThePhaseCostsARetryAndLosesNothing) {
  const Phase phase = GetParam();
  // Two ranges need twice the split's minimum of rows; a read cut in its middle needs more
  // rows than the sockets buffer; the other phases need a few batches.
  const int commits = phase == Phase::kBetweenRanges ? 22 : 12;
  const int rows_per_commit =
      phase == Phase::kBetweenRanges || phase == Phase::kReading ? 5'000 : 200;
  for (int c = 0; c < commits; ++c) Insert(1 + c * rows_per_commit, rows_per_commit);

  testing::ServedSim served(db_->path());
  Outage outage(served);
  std::atomic<bool> armed{false};
  StreamConfig config = Config();
  config.source = SourceOptions::Parse(
      served.SourceOptionsText().MergedWith(Options{{"captureInstance", kInstance},
                                                    {"sourceTimeZone", "UTC"},
                                                    {"arrowBatchSize", "100"},
                                                    {"numPartitions", "2"},
                                                    {"maxCommitsPerBatch", "4"}}));
  if (phase == Phase::kBetweenRanges) {
    config.source.max_commits_per_batch = std::nullopt;  // one batch holding both ranges
  }
  config.step_hook = [&](BatchStep step, std::int64_t batch_id) {
    if (phase == Phase::kBetweenBatches && step == BatchStep::kCommitted && batch_id == 0) {
      outage.Begin();
    }
  };
  const SourceFactory odbc = MakeSourceFactory(config.source);
  auto factory = [&]() -> std::unique_ptr<Source> {
    return std::make_unique<OutageSource>(odbc(), outage, phase, armed);
  };
  Stream stream(config, factory);
  stream.Prepare();
  armed = true;  // from the first batch on
  EXPECT_NO_THROW(stream.Run());
  EXPECT_TRUE(outage.fired()) << "the phase was never reached";
  EXPECT_EQ(BronzeChanges(), SourceChanges());
}

INSTANTIATE_TEST_SUITE_P(EveryPhase, ServerRestartTest,
                         ::testing::Values(Phase::kPlanning, Phase::kRetentionCheck,
                                           Phase::kSplitting, Phase::kReading,
                                           Phase::kBetweenRanges, Phase::kBetweenBatches),
                         [](const auto& info) { return PhaseName(info.param); });

}  // namespace
}  // namespace mssql_cdc::stream_testing
