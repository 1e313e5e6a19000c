// The storage-text parsers of the sim decoders.
#include "source/sim/sqlite_column_decoders.h"

#include <arrow/util/decimal.h>
#include <gtest/gtest.h>

#include "core/time.h"

namespace mssql_cdc {
namespace {

std::string Decimal(std::string_view text, int precision, int scale) {
  const auto parts = ParseStoredDecimal(text, precision, scale);
  if (!parts) return "invalid";
  return arrow::Decimal128(parts->high, parts->low).ToString(scale);
}

TEST(ParseStoredDecimalTest, ExactAtEveryPrecision) {
  EXPECT_EQ(Decimal("-12.3400", 18, 4), "-12.3400");
  EXPECT_EQ(Decimal("0.0000", 18, 4), "0.0000");
  EXPECT_EQ(Decimal("-0.00", 5, 2), "0.00");
  EXPECT_EQ(Decimal("+7", 1, 0), "7");
  EXPECT_EQ(Decimal("12.5", 10, 3), "12.500");  // fewer fraction digits: the same number
  EXPECT_EQ(Decimal("99999999999999999999999999999999999999", 38, 0),
            "99999999999999999999999999999999999999");
  EXPECT_EQ(Decimal("-0.99999999999999999999999999999999999999", 38, 38),
            "-0.99999999999999999999999999999999999999");
  EXPECT_EQ(Decimal("000000000000000000000000000000000000000001.5", 2, 1), "1.5");
}

TEST(ParseStoredDecimalTest, RefusesWhatDoesNotFit) {
  EXPECT_EQ(Decimal("100000000000000000000000000000000000000", 38, 0), "invalid");
  EXPECT_EQ(Decimal("1000.00", 5, 2), "invalid");  // 6 digits in decimal(5,2)
  EXPECT_EQ(Decimal("1.234", 5, 2), "invalid");    // more fraction digits than the scale
  EXPECT_EQ(Decimal("", 5, 2), "invalid");
  EXPECT_EQ(Decimal("-", 5, 2), "invalid");
  EXPECT_EQ(Decimal(".", 5, 2), "invalid");
  EXPECT_EQ(Decimal("1.2.3", 5, 2), "invalid");
  EXPECT_EQ(Decimal("1e3", 5, 0), "invalid");
  EXPECT_EQ(Decimal(" 1", 5, 0), "invalid");
}

TEST(ParseStoredDateTimeOffsetTest, ToUtcInstant) {
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.1234567 +05:30"),
            *ParseDateTime("2024-03-10 03:00:00.123456"));
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-12-31 22:00:00.0000000 -03:00"),
            *ParseDateTime("2025-01-01 01:00:00"));
  EXPECT_EQ(ParseStoredDateTimeOffset("0001-01-01 00:00:00.0000000 +14:00"),
            *ParseDateTime("0001-01-01 00:00:00") - 14 * kMicrosPerHour);
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.0000000 +00:00"),
            *ParseDateTime("2024-03-10 08:30:00"));
}

TEST(ParseStoredDateTimeOffsetTest, RefusesMalformedOffsets) {
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.0000000"), std::nullopt);
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.0000000 0530"), std::nullopt);
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.0000000 +15:00"), std::nullopt);
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-03-10 08:30:00.0000000 +05:60"), std::nullopt);
  EXPECT_EQ(ParseStoredDateTimeOffset("2024-13-10 08:30:00.0000000 +05:00"), std::nullopt);
}

TEST(ParseStoredDateTest, DaysSinceEpoch) {
  EXPECT_EQ(ParseStoredDate("1970-01-01"), 0);
  EXPECT_EQ(ParseStoredDate("1969-12-31"), -1);
  EXPECT_EQ(ParseStoredDate("2024-02-29"), 19782);
  EXPECT_EQ(ParseStoredDate("0001-01-01"), -719162);
  EXPECT_EQ(ParseStoredDate("2023-02-29"), std::nullopt);
  EXPECT_EQ(ParseStoredDate("2024-02-29 00:00:00"), std::nullopt);
}

}  // namespace
}  // namespace mssql_cdc
