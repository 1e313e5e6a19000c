#include "core/lsn.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

TEST(Lsn, RoundTripsTextInUppercase) {
  Lsn lsn = Lsn::Parse("0x0000002a000001000001");
  EXPECT_EQ(lsn.ToString(), "0x0000002A000001000001");
  EXPECT_EQ(Lsn::Parse(lsn.ToString()), lsn);
}

TEST(Lsn, ComparesAsUnsignedBytes) {
  EXPECT_LT(Lsn::Parse("0x0000002A000001000001"), Lsn::Parse("0x0000002A000001000002"));
  EXPECT_LT(Lsn::Parse("0x7F000000000000000000"), Lsn::Parse("0x80000000000000000000"));
  EXPECT_LT(Lsn::Parse("0x00FFFFFFFFFFFFFFFFFF"), Lsn::Parse("0x01000000000000000000"));
  EXPECT_EQ(Lsn::Parse("0x0000002A000001000001"), Lsn::Parse("0X0000002A000001000001"));
}

TEST(Lsn, TextOrderIsLsnOrder) {
  Lsn a = Lsn::Parse("0x0000002A0000010000FF"), b = a.Increment();
  EXPECT_LT(a.ToString(), b.ToString());
}

TEST(Lsn, IncrementAndDecrementCarryAcrossBytes) {
  EXPECT_EQ(Lsn::Parse("0x0000002A0000010000FF").Increment().ToString(), "0x0000002A000001000100");
  EXPECT_EQ(Lsn::Parse("0x0000002A000001000100").Decrement().ToString(), "0x0000002A0000010000FF");
  EXPECT_EQ(Lsn().Increment().ToString(), "0x00000000000000000001");
  EXPECT_THROW(Lsn().Decrement(), ConfigError);
  EXPECT_THROW(Lsn::Parse("0xFFFFFFFFFFFFFFFFFFFF").Increment(), ConfigError);
}

TEST(Lsn, RejectsMalformedTextWithAClearMessage) {
  for (const char* bad : {"", "0x", "0x123", "0x0000002A00000100000G", "0000002A000001000001",
                          "0x0000002A0000010000011"}) {
    EXPECT_THROW(Lsn::Parse(bad), ConfigError) << bad;
  }
  try {
    Lsn::Parse("0xZZ");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("0x followed by 20 hex digits"), std::string::npos);
  }
}

TEST(Lsn, LenientParsePadsOnTheLeft) {
  EXPECT_EQ(Lsn::ParseLenient("2A000001000001").ToString(), "0x0000002A000001000001");
  EXPECT_EQ(Lsn::ParseLenient("0x1").ToString(), "0x00000000000000000001");
  EXPECT_THROW(Lsn::ParseLenient("0x"), ConfigError);
  EXPECT_THROW(Lsn::ParseLenient("123456789012345678901"), ConfigError);
}

TEST(Lsn, FromBytesNeedsTenBytes) {
  unsigned char raw[10] = {0, 0, 0, 0x2A, 0, 0, 1, 0, 0, 1};
  EXPECT_EQ(Lsn::FromBytes(raw, 10).ToString(), "0x0000002A000001000001");
  EXPECT_THROW(Lsn::FromBytes(raw, 9), SourceError);
  EXPECT_TRUE(Lsn().IsZero());
  EXPECT_FALSE(Lsn::FromUint64(1).IsZero());
}

}  // namespace
}  // namespace mssql_cdc
