#include "core/offset.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

TEST(Offset, WritesTheContractFormat) {
  Offset o{Lsn::Parse("0x0000002A000001000001"), UtcMicros{*ParseDateTime("2026-03-01 12:34:56.789999")}};
  EXPECT_EQ(o.ToJson(),
            R"({"lsn": "0x0000002A000001000001", "commit_ts": "2026-03-01T12:34:56.789"})");
  Offset unknown{Lsn::Parse("0x0000002A000001000001"), std::nullopt};
  EXPECT_EQ(unknown.ToJson(), R"({"lsn": "0x0000002A000001000001", "commit_ts": ""})");
}

TEST(Offset, RoundTripsAtMilliseconds) {
  Offset o{Lsn::Parse("0x0000002A000001000001"), UtcMicros{*ParseDateTime("1999-12-31T23:59:59.123")}};
  EXPECT_EQ(Offset::FromJson(o.ToJson()), o);
  EXPECT_EQ(Offset::FromJson(R"({"lsn":"0x0000002A000001000001","commit_ts":""})").commit_ts,
            std::nullopt);
}

TEST(Offset, RejectsWhatIsNotAnOffset) {
  for (const char* bad : {"", "[]", "{}", R"({"lsn": 5})", R"({"lsn": "0x12"})",
                          R"({"lsn": "0x0000002A000001000001", "commit_ts": "yesterday"})"}) {
    EXPECT_THROW(Offset::FromJson(bad), ConfigError) << bad;
  }
}

TEST(Time, FormatsAndParsesCivilTimes) {
  EXPECT_EQ(FormatIsoMillis(0), "1970-01-01T00:00:00.000");
  EXPECT_EQ(FormatIsoMillis(-1), "1969-12-31T23:59:59.999");
  EXPECT_EQ(FormatDateTime(*ParseDateTime("2024-02-29 23:59:59.1234567"), 7),
            "2024-02-29 23:59:59.1234560");
  EXPECT_EQ(*ParseDateTime("0001-01-01"), DaysFromCivil(1, 1, 1) * kMicrosPerDay);
  EXPECT_FALSE(ParseDateTime("2023-02-29").has_value());
  EXPECT_FALSE(ParseDateTime("2023-01-01 24:00").has_value());
  EXPECT_FALSE(ParseDateTime("2023-01-01x").has_value());
}

}  // namespace
}  // namespace mssql_cdc
