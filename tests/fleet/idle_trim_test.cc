// IdleTrim: when a run gives its free memory back.
#include "fleet/idle_trim.h"

#include <gtest/gtest.h>

#include <chrono>

namespace mssql_cdc {
namespace {

using std::chrono::milliseconds;

TEST(IdleTrim, NothingBeforeTheFirstChange) {
  IdleTrim trim(milliseconds(1000));
  const auto t0 = IdleTrim::Clock::now();
  trim.Poll(0, t0);
  trim.Poll(0, t0 + milliseconds(5000));
  EXPECT_EQ(trim.trims(), 0);
}

TEST(IdleTrim, OnceAStillSpellLastsTheStillness) {
  IdleTrim trim(milliseconds(1000));
  const auto t0 = IdleTrim::Clock::now();
  trim.Poll(1, t0);
  trim.Poll(1, t0 + milliseconds(999));
  EXPECT_EQ(trim.trims(), 0);
  trim.Poll(1, t0 + milliseconds(1000));
  EXPECT_EQ(trim.trims(), 1);
  trim.Poll(1, t0 + milliseconds(9000));  // still the same spell
  EXPECT_EQ(trim.trims(), 1);
}

TEST(IdleTrim, BusyStreamsKeepTheirPages) {
  IdleTrim trim(milliseconds(1000));
  const auto t0 = IdleTrim::Clock::now();
  // A batch committed every 200 ms: never still for a second.
  for (int batch = 1; batch <= 50; ++batch) trim.Poll(batch, t0 + milliseconds(200 * batch));
  EXPECT_EQ(trim.trims(), 0);
  trim.Poll(50, t0 + milliseconds(200 * 50 + 1000));
  EXPECT_EQ(trim.trims(), 1);
  trim.Poll(51, t0 + milliseconds(200 * 50 + 1500));  // a new burst, then still again
  trim.Poll(51, t0 + milliseconds(200 * 50 + 2500));
  EXPECT_EQ(trim.trims(), 2);
}

}  // namespace
}  // namespace mssql_cdc
