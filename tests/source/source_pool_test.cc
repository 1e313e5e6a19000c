// SourcePool: at most `capacity` Sources open, each lent to one borrower, kept between loans.
#include "source/source_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/errors.h"
#include "source/open_source.h"
#include "sim/database.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc {
namespace {

class SourcePoolTest : public ::testing::Test {
 protected:
  void SetUp() override { sim::SimDatabase::Create(dir_.File("pool.sim")); }
  SourceFactory OpenSim() const {
    return MakeSourceFactory(
        SourceOptions::Parse(Options{{"backend", "sim"}, {"simPath", dir_.File("pool.sim")},
                                     {"captureInstance", "any"}}));
  }
  testing::TempDir dir_;
};

TEST_F(SourcePoolTest, APoolOpensNoMoreThanItsCapacityAndReusesWhatItOpened) {
  std::atomic<int> opened{0};
  const SourceFactory open_sim = OpenSim();
  SourcePool pool([&] { ++opened; return open_sim(); }, 2);
  {
    auto a = pool.Acquire();
    auto b = pool.Acquire();
    EXPECT_FALSE(pool.TryAcquire());  // both lent
    EXPECT_EQ(pool.open(), 2);
  }
  std::vector<std::thread> threads;
  std::atomic<int> borrowed_at_once{0}, most{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto lease = pool.Acquire();
        const int now = ++borrowed_at_once;
        most = std::max(most.load(), now);
        lease->MaxLsn();
        --borrowed_at_once;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(opened.load(), 2);  // 160 loans, two Sources
  EXPECT_EQ(pool.most_open(), 2);
}

TEST_F(SourcePoolTest, ASourceThatFailsToOpenLeavesRoomForTheNext) {
  std::atomic<int> tries{0};
  const SourceFactory open_sim = OpenSim();
  SourcePool pool(
      [&]() -> std::unique_ptr<Source> {
        if (++tries == 1) throw SourceError("the server is starting");
        return open_sim();
      },
      1);
  EXPECT_THROW(pool.Acquire(), SourceError);
  EXPECT_EQ(pool.open(), 0);
  EXPECT_TRUE(pool.Acquire());
}

}  // namespace
}  // namespace mssql_cdc
