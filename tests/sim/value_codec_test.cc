#include "sim/value_codec.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace mssql_cdc::sim {
namespace {

Value Encode(const char* type, const Value& v) { return EncodeValue(SqlType::Parse(type), v, "c"); }

void ExpectRejected(const char* type, const Value& v) {
  try {
    Encode(type, v);
    ADD_FAILURE() << type << " accepted " << v.DebugString();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("column c"), std::string::npos) << e.what();
  }
}

TEST(ValueCodecTest, Integers) {
  EXPECT_EQ(Encode("int", 42), Value(42));
  EXPECT_EQ(Encode("bit", 5), Value(1));
  EXPECT_EQ(Encode("tinyint", 255), Value(255));
  EXPECT_EQ(Encode("bigint", 3.0), Value(3));
  ExpectRejected("tinyint", 256);
  ExpectRejected("tinyint", -1);
  ExpectRejected("smallint", 32768);
  ExpectRejected("int", std::int64_t{2147483648});
  ExpectRejected("int", "12");
  ExpectRejected("int", 1.5);
}

TEST(ValueCodecTest, Decimals) {
  EXPECT_EQ(Encode("decimal(18,2)", "-12.3"), Value("-12.30"));
  EXPECT_EQ(Encode("decimal(18,2)", 7), Value("7.00"));
  EXPECT_EQ(Encode("decimal(18,2)", 1.005), Value("1.00"));  // the double is below 1.005
  EXPECT_EQ(Encode("decimal(5,2)", "1.235"), Value("1.24"));  // rounds half away from zero
  EXPECT_EQ(Encode("decimal(5,0)", "99999"), Value("99999"));
  EXPECT_EQ(Encode("numeric(38,0)", std::string(38, '9')), Value(std::string(38, '9')));
  EXPECT_EQ(Encode("money", "1.5"), Value("1.5000"));
  ExpectRejected("decimal(5,2)", "1234.5");
  ExpectRejected("decimal(5,2)", "999.995");  // rounds up past the precision
  ExpectRejected("decimal(5,2)", "1e3");
  ExpectRejected("decimal(5,2)", "abc");
  ExpectRejected("smallmoney", "214748.3648");
}

TEST(ValueCodecTest, DatesAndTimes) {
  EXPECT_EQ(Encode("date", "2026-02-28"), Value("2026-02-28"));
  ExpectRejected("date", "2026-02-29");
  ExpectRejected("date", "2026-13-01");
  ExpectRejected("date", "01/02/2026");
  EXPECT_EQ(Encode("datetime2(7)", "2026-01-02T03:04:05.1234567"),
            Value("2026-01-02 03:04:05.1234567"));
  EXPECT_EQ(Encode("datetime2(3)", "2026-01-02 03:04:05.1235"),
            Value("2026-01-02 03:04:05.1240000"));
  EXPECT_EQ(Encode("datetime2(0)", "2026-12-31 23:59:59.5"), Value("2027-01-01 00:00:00.0000000"));
  EXPECT_EQ(Encode("datetime", "2026-01-01 00:00:00.002"), Value("2026-01-01 00:00:00.0030000"));
  ExpectRejected("datetime", "1752-12-31 00:00:00");
  EXPECT_EQ(Encode("smalldatetime", "2026-01-01 10:20:31"), Value("2026-01-01 10:21:00.0000000"));
  EXPECT_EQ(Encode("time(2)", "10:20:30.129"), Value("10:20:30.1300000"));
  ExpectRejected("time", "24:00:00");
  EXPECT_EQ(Encode("datetimeoffset(7)", "2026-01-01 10:00:00 -03:00"),
            Value("2026-01-01 10:00:00.0000000 -03:00"));
  EXPECT_EQ(Encode("datetimeoffset", "2026-01-01 10:00:00"),
            Value("2026-01-01 10:00:00.0000000 +00:00"));
  ExpectRejected("datetimeoffset", "2026-01-01 10:00:00 +15:00");
  ExpectRejected("datetime2", 20260101);
}

TEST(ValueCodecTest, InstantsBefore1970RoundLikeLaterOnes) {
  EXPECT_EQ(Encode("smalldatetime", "1900-01-01 00:00:00"), Value("1900-01-01 00:00:00.0000000"));
  EXPECT_EQ(Encode("smalldatetime", "1969-12-31 23:59:31"), Value("1970-01-01 00:00:00.0000000"));
  EXPECT_EQ(Encode("datetime", "1753-01-01 00:00:00.002"), Value("1753-01-01 00:00:00.0030000"));
  EXPECT_EQ(Encode("datetime2(0)", "0001-01-01 00:00:00.4"), Value("0001-01-01 00:00:00.0000000"));
  EXPECT_EQ(Encode("datetime2(3)", "1969-12-31 23:59:59.9996"),
            Value("1970-01-01 00:00:00.0000000"));
  EXPECT_EQ(Encode("datetimeoffset(2)", "1950-06-01 12:00:00.125 +02:00"),
            Value("1950-06-01 12:00:00.1300000 +02:00"));
}

TEST(ValueCodecTest, StringsCountTheirUnits) {
  EXPECT_EQ(Encode("nvarchar(3)", "\xC3\xA9t\xC3\xA9"), Value("\xC3\xA9t\xC3\xA9"));
  ExpectRejected("varchar(3)", "\xC3\xA9t\xC3\xA9");  // 5 bytes
  ExpectRejected("nvarchar(3)", "abcd");
  EXPECT_EQ(Encode("char(4)", "ab"), Value("ab  "));
  EXPECT_EQ(Encode("nvarchar(max)", std::string(100000, 'x')), Value(std::string(100000, 'x')));
  ExpectRejected("nvarchar(10)", "\xFF");
  ExpectRejected("nvarchar(10)", 5);
}

TEST(ValueCodecTest, BinaryAndGuid) {
  EXPECT_EQ(Encode("varbinary(4)", "0x0aFF"), Value(Bytes{std::string("\x0A\xFF", 2)}));
  EXPECT_EQ(Encode("binary(3)", Bytes{"a"}), Value(Bytes{std::string("a\0\0", 3)}));
  ExpectRejected("varbinary(1)", "0x0102");
  ExpectRejected("varbinary(4)", "0x1");
  ExpectRejected("varbinary(4)", "plain");
  EXPECT_EQ(Encode("uniqueidentifier", "{8a737954-cbec-40ce-a534-2affb5a0e207}"),
            Value("8A737954-CBEC-40CE-A534-2AFFB5A0E207"));
  ExpectRejected("uniqueidentifier", "8A737954CBEC40CEA5342AFFB5A0E207");
}

TEST(ValueCodecTest, FloatsAndNulls) {
  EXPECT_EQ(Encode("float", 1), Value(1.0));
  EXPECT_EQ(Encode("real", 0.1), Value(static_cast<double>(0.1f)));
  ExpectRejected("real", 1e39);
  EXPECT_TRUE(Encode("int", Value()).is_null());
  ExpectRejected("rowversion", Bytes{"12345678"});
  EXPECT_THROW(CheckSimulatedType(SqlType::Parse("geography"), "g"), ConfigError);
}

}  // namespace
}  // namespace mssql_cdc::sim
