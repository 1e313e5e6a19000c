#include <gtest/gtest.h>

#include "engine/retention_guard.h"

namespace mssql_cdc {
namespace {

TEST(CleanupHasPurged, OnlyAWatermarkPastTheEnableByMoreThanASecond) {
  const UtcMicros enabled{1'000'000'000};
  EXPECT_FALSE(CleanupHasPurged(enabled, std::nullopt));
  EXPECT_FALSE(CleanupHasPurged(enabled, UtcMicros{enabled.value - 300 * kMicrosPerSecond}));  // the max LSN at enable
  EXPECT_FALSE(CleanupHasPurged(enabled, enabled));
  EXPECT_FALSE(CleanupHasPurged(enabled, UtcMicros{enabled.value + 3'333}));  // datetime's rounding
  EXPECT_FALSE(CleanupHasPurged(enabled, UtcMicros{enabled.value + kMicrosPerSecond}));
  EXPECT_TRUE(CleanupHasPurged(enabled, UtcMicros{enabled.value + kMicrosPerSecond + 1}));
  EXPECT_TRUE(CleanupHasPurged(enabled, UtcMicros{enabled.value + 72 * kMicrosPerHour}));
}

}  // namespace
}  // namespace mssql_cdc
