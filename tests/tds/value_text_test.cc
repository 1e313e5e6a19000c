#include "tds/value_text.h"

#include <gtest/gtest.h>

#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

TEST(ValueText, DaysCountFromYearOne) {
  std::int32_t days = -1;
  ASSERT_TRUE(DaysFromCivil(1, 1, 1, &days));
  EXPECT_EQ(0, days);
  ASSERT_TRUE(DaysFromCivil(1900, 1, 1, &days));
  EXPECT_EQ(693595, days);
  ASSERT_TRUE(DaysFromCivil(2024, 1, 2, &days));
  EXPECT_EQ(738886, days);
  ASSERT_TRUE(DaysFromCivil(9999, 12, 31, &days));
  EXPECT_EQ(3652058, days);
  // Around the leap days of 2024, 2000 (a leap century) and 1900 (not one).
  const struct {
    int y, m, d;
    std::int32_t expected;
  } kCases[] = {{2024, 3, 1, 738945}, {2000, 3, 1, 730179}, {1900, 3, 1, 693654},
                {2023, 12, 31, 738884}};
  for (const auto& c : kCases) {
    ASSERT_TRUE(DaysFromCivil(c.y, c.m, c.d, &days));
    EXPECT_EQ(c.expected, days) << c.y << "-" << c.m << "-" << c.d;
  }
  EXPECT_TRUE(DaysFromCivil(2024, 2, 29, &days));
  EXPECT_FALSE(DaysFromCivil(2023, 2, 29, &days));
  EXPECT_FALSE(DaysFromCivil(1900, 2, 29, &days));
  EXPECT_FALSE(DaysFromCivil(2024, 13, 1, &days));
  EXPECT_FALSE(DaysFromCivil(0, 12, 31, &days));
}

TEST(ValueText, TimestampsWithFractionAndOffset) {
  Timestamp ts;
  ASSERT_TRUE(ParseTimestamp("2024-01-02 03:04:05.1234567 -05:30", &ts));
  EXPECT_EQ(738886, ts.days);
  EXPECT_EQ(11045LL * kTicksPerSecond + 1234567, ts.ticks);
  EXPECT_TRUE(ts.has_offset);
  EXPECT_EQ(-330, ts.offset_minutes);

  ASSERT_TRUE(ParseTimestamp("2024-01-02T03:04:05.5", &ts));
  EXPECT_EQ(11045LL * kTicksPerSecond + 5'000'000, ts.ticks);
  EXPECT_FALSE(ts.has_offset);

  ASSERT_TRUE(ParseTimestamp("2024-01-02", &ts));
  EXPECT_EQ(0, ts.ticks);
  ASSERT_TRUE(ParseTimestamp("2024-01-02 03:04:05+14:00", &ts));
  EXPECT_EQ(840, ts.offset_minutes);

  EXPECT_FALSE(ParseTimestamp("2024-01-02 24:00:00", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-02 03:04:05.12345678", &ts));  // 8 digits
  EXPECT_FALSE(ParseTimestamp("2024-01-02 03:04:05 +15:00", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-1-2", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-02 03:04:05 junk", &ts));
}

TEST(ValueText, ScaledDecimals) {
  bool negative = false;
  unsigned __int128 magnitude = 0;
  ASSERT_EQ(DecimalParse::kOk, ParseScaledDecimal("-12.34", 18, 4, &negative, &magnitude));
  EXPECT_TRUE(negative);
  EXPECT_EQ(123400u, static_cast<std::uint64_t>(magnitude));

  ASSERT_EQ(DecimalParse::kOk, ParseScaledDecimal("-0.0000", 18, 4, &negative, &magnitude));
  EXPECT_FALSE(negative) << "negative zero is zero";

  ASSERT_EQ(DecimalParse::kOk, ParseScaledDecimal("12.340000", 18, 4, &negative, &magnitude));
  EXPECT_EQ(123400u, static_cast<std::uint64_t>(magnitude));

  EXPECT_EQ(DecimalParse::kInexact, ParseScaledDecimal("1.23451", 18, 4, &negative, &magnitude));
  EXPECT_EQ(DecimalParse::kTooManyDigits,
            ParseScaledDecimal("12345", 5, 1, &negative, &magnitude));
  EXPECT_EQ(DecimalParse::kOk, ParseScaledDecimal("0001234.5", 5, 1, &negative, &magnitude));
  EXPECT_EQ(DecimalParse::kMalformed, ParseScaledDecimal("1e5", 18, 0, &negative, &magnitude));
  EXPECT_EQ(DecimalParse::kMalformed, ParseScaledDecimal("", 18, 0, &negative, &magnitude));
  EXPECT_EQ(DecimalParse::kMalformed, ParseScaledDecimal(".", 18, 0, &negative, &magnitude));

  const std::string max38(38, '9');
  ASSERT_EQ(DecimalParse::kOk, ParseScaledDecimal(max38, 38, 0, &negative, &magnitude));
  unsigned __int128 expected = 1;
  for (int i = 0; i < 38; ++i) expected *= 10;
  EXPECT_TRUE(magnitude == expected - 1);
}

TEST(ValueText, GuidToWireOrder) {
  std::uint8_t bytes[16];
  ASSERT_TRUE(ParseGuid("6F9619FF-8B86-D011-B42D-00C04FC964FF", bytes));
  EXPECT_BYTES("FF 19 96 6F 86 8B 11 D0 B4 2D 00 C0 4F C9 64 FF",
               std::string_view(reinterpret_cast<char*>(bytes), 16));
  ASSERT_TRUE(ParseGuid("{6f9619ff-8b86-d011-b42d-00c04fc964ff}", bytes));
  EXPECT_EQ(0xFF, bytes[0]);
  EXPECT_FALSE(ParseGuid("6F9619FF8B86-D011-B42D-00C04FC964FF0", bytes));
  EXPECT_FALSE(ParseGuid("6F9619FF-8B86-D011-B42D-00C04FC964FG", bytes));
}

}  // namespace
}  // namespace mssql_cdc::tds
