#include "tds/column_codec.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

ColumnCodec Codec(const std::string& type, bool nullable = true) {
  return ColumnCodec(ResultColumn{"c", SqlType::Parse(type), nullable});
}

// UserType, Flags and TYPE_INFO of a column named "c" (the name's B_VARCHAR cut off).
std::string TypeInfo(const std::string& type, bool nullable = true) {
  WireBuffer out;
  Codec(type, nullable).WriteMetadata(out);
  std::string bytes(out.view());
  EXPECT_EQ(testing::Hex("01 63 00"), bytes.substr(bytes.size() - 3)) << "column name 'c'";
  return bytes.substr(6, bytes.size() - 9);
}

std::string TextValue(const std::string& type, std::string_view value) {
  WireBuffer out;
  Codec(type).Text(out, value);
  return std::string(out.view());
}

std::string IntValue(const std::string& type, std::int64_t value) {
  WireBuffer out;
  Codec(type).Int(out, value);
  return std::string(out.view());
}

std::string NullValue(const std::string& type) {
  WireBuffer out;
  Codec(type).Null(out);
  return std::string(out.view());
}

TEST(ColumnCodec, MetadataCarriesUserTypeFlagsTypeInfoAndName) {
  WireBuffer out;
  ColumnCodec(ResultColumn{"bar", SqlType::Parse("varchar(3)"), false}).WriteMetadata(out);
  // The column of MS-TDS 4.7 "SQL Batch Server Response", flags aside (0 = NOT NULL here).
  EXPECT_BYTES("00 00 00 00 00 00 A7 03 00 09 04 D0 00 34 03 62 00 61 00 72 00", out.view());
  WireBuffer nullable;
  ColumnCodec(ResultColumn{"", SqlType::Parse("int"), true}).WriteMetadata(nullable);
  EXPECT_BYTES("00 00 00 00 01 00 26 04 00", nullable.view());
}

TEST(ColumnCodec, IntegersAndBit) {
  EXPECT_BYTES("26 01", TypeInfo("tinyint"));
  EXPECT_BYTES("26 02", TypeInfo("smallint"));
  EXPECT_BYTES("26 04", TypeInfo("int"));
  EXPECT_BYTES("26 08", TypeInfo("bigint"));
  EXPECT_BYTES("68 01", TypeInfo("bit"));
  EXPECT_BYTES("01 FF", IntValue("tinyint", 255));
  EXPECT_BYTES("02 00 80", IntValue("smallint", -32768));
  EXPECT_BYTES("04 FE FF FF FF", IntValue("int", -2));
  EXPECT_BYTES("08 FF FF FF FF FF FF FF 7F", IntValue("bigint", INT64_MAX));
  EXPECT_BYTES("01 01", IntValue("bit", 1));
  EXPECT_BYTES("00", NullValue("int"));
  EXPECT_THROW(IntValue("tinyint", 256), SourceError);
  EXPECT_THROW(IntValue("tinyint", -1), SourceError);
  EXPECT_THROW(IntValue("int", 2147483648LL), SourceError);
}

TEST(ColumnCodec, Floats) {
  EXPECT_BYTES("6D 04", TypeInfo("real"));
  EXPECT_BYTES("6D 08", TypeInfo("float"));
  EXPECT_BYTES("6D 04", TypeInfo("float(24)"));
  WireBuffer out;
  Codec("float").Float(out, 1.5);
  EXPECT_BYTES("08 00 00 00 00 00 00 F8 3F", out.view());
  out.clear();
  Codec("real").Float(out, -2.0);
  EXPECT_BYTES("04 00 00 00 C0", out.view());
}

TEST(ColumnCodec, DecimalWidthsFollowPrecision) {
  EXPECT_BYTES("6A 05 09 02", TypeInfo("decimal(9,2)"));
  EXPECT_BYTES("6A 09 12 04", TypeInfo("decimal(18,4)"));
  EXPECT_BYTES("6A 0D 1C 00", TypeInfo("decimal(28,0)"));
  EXPECT_BYTES("6C 11 26 0A", TypeInfo("numeric(38,10)"));
  EXPECT_BYTES("09 00 08 E2 01 00 00 00 00 00", TextValue("decimal(18,4)", "-12.3400"));
  EXPECT_BYTES("05 01 39 30 00 00", TextValue("decimal(9,2)", "123.45"));
  EXPECT_BYTES("05 01 39 30 00 00", TextValue("decimal(9,2)", "123.450"));
}

TEST(ColumnCodec, Decimal38ExtremesAndOverflow) {
  const std::string max = "9999999999999999999999999999.9999999999";
  EXPECT_BYTES("11 01 FF FF FF FF 3F 22 8A 09 7A C4 86 5A A8 4C 3B 4B",
               TextValue("decimal(38,10)", max));
  EXPECT_BYTES("11 00 FF FF FF FF 3F 22 8A 09 7A C4 86 5A A8 4C 3B 4B",
               TextValue("decimal(38,10)", "-" + max));
  EXPECT_THROW(TextValue("decimal(38,10)", "1" + max), SourceError);
  EXPECT_THROW(TextValue("decimal(18,4)", "1.23456"), SourceError);
  EXPECT_THROW(TextValue("decimal(18,4)", "abc"), SourceError);
  EXPECT_THROW(IntValue("decimal(5,2)", 1000), SourceError);
  EXPECT_BYTES("05 00 B8 88 00 00", IntValue("decimal(5,2)", -350));
}

TEST(ColumnCodec, MoneyHalvesHighFirst) {
  EXPECT_BYTES("6E 08", TypeInfo("money"));
  EXPECT_BYTES("6E 04", TypeInfo("smallmoney"));
  EXPECT_BYTES("08 FF FF FF FF F8 1D FE FF", TextValue("money", "-12.3400"));
  EXPECT_BYTES("08 00 00 00 00 08 E2 01 00", TextValue("money", "12.34"));
  EXPECT_BYTES("04 08 E2 01 00", TextValue("smallmoney", "12.3400"));
  EXPECT_BYTES("08 FF FF FF 7F FF FF FF FF", TextValue("money", "922337203685477.5807"));
  EXPECT_BYTES("08 00 00 00 80 00 00 00 00", TextValue("money", "-922337203685477.5808"));
  EXPECT_THROW(TextValue("money", "922337203685477.5808"), SourceError);
  EXPECT_THROW(TextValue("smallmoney", "214748.3648"), SourceError);
}

TEST(ColumnCodec, DateAndTime) {
  EXPECT_BYTES("28", TypeInfo("date"));
  EXPECT_BYTES("29 03", TypeInfo("time(3)"));
  EXPECT_BYTES("2A 07", TypeInfo("datetime2"));
  EXPECT_BYTES("2B 07", TypeInfo("datetimeoffset(7)"));
  EXPECT_BYTES("03 00 00 00", TextValue("date", "0001-01-01"));
  EXPECT_BYTES("03 DA B9 37", TextValue("date", "9999-12-31"));
  EXPECT_BYTES("04 95 2C B3 02", TextValue("time(3)", "12:34:56.789"));
  EXPECT_BYTES("03 00 00 00", TextValue("time(0)", "23:59:59.6"));  // rounds past midnight
  EXPECT_THROW(TextValue("date", "2023-02-29"), SourceError);
}

TEST(ColumnCodec, Datetime2CountsFromYearOne) {
  // 03:04:05.1234567 = 110451234567 units of 100 ns; 2024-01-02 = day 738886.
  EXPECT_BYTES("08 07 17 68 B7 19 46 46 0B",
               TextValue("datetime2(7)", "2024-01-02 03:04:05.1234567"));
  // datetime2(0) rounds .5 up to the next second; time takes 3 bytes.
  EXPECT_BYTES("06 26 2B 00 46 46 0B", TextValue("datetime2(0)", "2024-01-02 03:04:05.5"));
  // datetime2(2): 1104512 hundredths.
  EXPECT_BYTES("06 80 DA 10 46 46 0B", TextValue("datetime2(2)", "2024-01-02 03:04:05.12"));
  EXPECT_THROW(TextValue("datetime2", "2024-01-02 03:04:05 +01:00"), SourceError);
}

TEST(ColumnCodec, DatetimeoffsetHoldsUtcAndTheOffset) {
  // Local 03:04:05.1234567 at -05:00 is 08:04:05.1234567 UTC; -300 minutes = D4 FE.
  EXPECT_BYTES("0A 07 1F 3E A0 43 46 46 0B D4 FE",
               TextValue("datetimeoffset(7)", "2024-01-02 03:04:05.1234567 -05:00"));
  // 22:00 at -05:00 on Jan 1 is 03:00 UTC on Jan 2: the day carries.
  EXPECT_BYTES("0A 00 38 4D 25 19 46 46 0B D4 FE",
               TextValue("datetimeoffset(7)", "2024-01-01 22:00:00.0000000 -05:00"));
}

TEST(ColumnCodec, DatetimeAndSmalldatetime) {
  EXPECT_BYTES("6F 08", TypeInfo("datetime"));
  EXPECT_BYTES("6F 04", TypeInfo("smalldatetime"));
  EXPECT_BYTES("08 00 00 00 00 01 00 00 00", TextValue("datetime", "1900-01-01 00:00:00.003"));
  // 45291 days after 1900-01-01; 11045 s * 300 + 2 ticks (.007 s).
  EXPECT_BYTES("08 EB B0 00 00 5E 8F 32 00", TextValue("datetime", "2024-01-02 03:04:05.007"));
  EXPECT_BYTES("08 46 2E FF FF 00 00 00 00", TextValue("datetime", "1753-01-01 00:00:00.000"));
  EXPECT_THROW(TextValue("datetime", "1752-12-31 00:00:00"), SourceError);
  EXPECT_BYTES("04 FF FF 9F 05", TextValue("smalldatetime", "2079-06-06 23:59:00"));
  EXPECT_THROW(TextValue("smalldatetime", "2079-06-07 00:00:00"), SourceError);
}

TEST(ColumnCodec, Guid) {
  EXPECT_BYTES("24 10", TypeInfo("uniqueidentifier"));
  EXPECT_BYTES("10 FF 19 96 6F 86 8B 11 D0 B4 2D 00 C0 4F C9 64 FF",
               TextValue("uniqueidentifier", "6f9619ff-8b86-d011-b42d-00c04fc964ff"));
  EXPECT_THROW(TextValue("uniqueidentifier", "not-a-guid"), SourceError);
}

TEST(ColumnCodec, CharTypes) {
  EXPECT_BYTES("AF 05 00 09 04 D0 00 34", TypeInfo("char(5)"));
  EXPECT_BYTES("A7 32 00 09 04 D0 00 34", TypeInfo("varchar(50)"));
  EXPECT_BYTES("EF 0A 00 09 04 D0 00 34", TypeInfo("nchar(5)"));
  EXPECT_BYTES("E7 64 00 09 04 D0 00 34", TypeInfo("nvarchar(50)"));
  EXPECT_BYTES("E7 40 1F 09 04 D0 00 34", TypeInfo("nvarchar(4000)"));
  EXPECT_BYTES("05 00 61 62 20 20 20", TextValue("char(5)", "ab"));
  EXPECT_BYTES("03 00 41 E9 3F", TextValue("varchar(5)", "A\xC3\xA9\xE4\xB8\xAD"));
  EXPECT_BYTES("0A 00 61 00 20 00 20 00 20 00 20 00", TextValue("nchar(5)", "a"));
  EXPECT_BYTES("06 00 61 00 3D D8 00 DE", TextValue("nvarchar(3)", "a\xF0\x9F\x98\x80"));
  EXPECT_BYTES("FF FF", NullValue("nvarchar(3)"));
  EXPECT_THROW(TextValue("nvarchar(3)", "abcd"), SourceError);
  EXPECT_THROW(TextValue("nvarchar(1)", "\xF0\x9F\x98\x80"), SourceError);  // 2 code units
  EXPECT_THROW(TextValue("varchar(2)", "abc"), SourceError);
  EXPECT_THROW(TextValue("varchar(5)", "\xFF"), SourceError);
}

TEST(ColumnCodec, MaxTypesGoAsPlp) {
  EXPECT_BYTES("E7 FF FF 09 04 D0 00 34", TypeInfo("nvarchar(max)"));
  EXPECT_BYTES("A7 FF FF 09 04 D0 00 34", TypeInfo("varchar(max)"));
  EXPECT_BYTES("A5 FF FF", TypeInfo("varbinary(max)"));
  EXPECT_BYTES("A7 FF FF 09 04 D0 00 34", TypeInfo("text"));
  EXPECT_BYTES("E7 FF FF 09 04 D0 00 34", TypeInfo("ntext"));
  EXPECT_BYTES("E7 FF FF 09 04 D0 00 34", TypeInfo("xml"));
  EXPECT_BYTES("A5 FF FF", TypeInfo("image"));
  EXPECT_BYTES("04 00 00 00 00 00 00 00 04 00 00 00 61 00 62 00 00 00 00 00",
               TextValue("nvarchar(max)", "ab"));
  EXPECT_BYTES("00 00 00 00 00 00 00 00 00 00 00 00", TextValue("nvarchar(max)", ""));
  EXPECT_BYTES("02 00 00 00 00 00 00 00 02 00 00 00 61 62 00 00 00 00",
               TextValue("varchar(max)", "ab"));
  EXPECT_BYTES("FF FF FF FF FF FF FF FF", NullValue("nvarchar(max)"));
  EXPECT_BYTES("FF FF FF FF FF FF FF FF", NullValue("varbinary(max)"));
  WireBuffer out;
  Codec("varbinary(max)").Binary(out, std::string("\x01\x02\x03", 3));
  EXPECT_BYTES("03 00 00 00 00 00 00 00 03 00 00 00 01 02 03 00 00 00 00", out.view());
}

TEST(ColumnCodec, BinaryTypes) {
  EXPECT_BYTES("AD 0A 00", TypeInfo("binary(10)"));
  EXPECT_BYTES("A5 80 00", TypeInfo("varbinary(128)"));
  EXPECT_BYTES("AD 08 00", TypeInfo("timestamp"));
  EXPECT_BYTES("AD 08 00", TypeInfo("rowversion"));
  WireBuffer out;
  Codec("binary(4)").Binary(out, std::string("\x01\x02", 2));
  EXPECT_BYTES("04 00 01 02 00 00", out.view());
  out.clear();
  Codec("varbinary(4)").Binary(out, "");
  EXPECT_BYTES("00 00", out.view());
  EXPECT_THROW(Codec("binary(2)").Binary(out, "abc"), SourceError);
}

TEST(ColumnCodec, ErrorsNameTheColumnAndLeaveTheBufferAlone) {
  WireBuffer out;
  out.PutU8(0x42);
  ColumnCodec codec(ResultColumn{"amount", SqlType::Parse("decimal(5,2)"), true});
  try {
    codec.Text(out, "12345.6");
    FAIL() << "expected SourceError";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("'amount'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("decimal(5,2)"), std::string::npos) << e.what();
  }
  EXPECT_BYTES("42", out.view());
  ColumnCodec strict(ResultColumn{"id", SqlType::Parse("int"), false});
  EXPECT_THROW(strict.Null(out), SourceError);
  EXPECT_THROW(codec.Binary(out, "x"), SourceError);
  EXPECT_THROW(Codec("int").Float(out, 1.0), SourceError);
  EXPECT_BYTES("42", out.view());
}

TEST(ColumnCodec, TypesWithoutWireFormAreRefused) {
  EXPECT_THROW(Codec("sql_variant"), UnsupportedTypeError);
  EXPECT_THROW(Codec("geography"), UnsupportedTypeError);
}

}  // namespace
}  // namespace mssql_cdc::tds

namespace mssql_cdc::tds {
namespace {

// A codec keeps the last parsed value's encoding: repeats, changes and a bad value after a good
// one must encode exactly as a fresh codec does.
TEST(ColumnCodec, ARepeatedValueEncodesAsAFreshCodecWould) {
  for (const auto& [type, first, second] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"datetime", "2026-03-01 10:00:00.123", "2026-03-01 10:00:01"},
           {"datetime2(7)", "2026-01-01 00:00:00.1234567", "1999-12-31 23:59:59"},
           {"date", "2026-03-15", "0001-01-01"},
           {"decimal(18,2)", "12.50", "-3.25"},
           {"uniqueidentifier", "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "00000000-0000-0000-0000-000000000001"}}) {
    ColumnCodec codec = Codec(type);
    WireBuffer out;
    for (const std::string& value : {first, first, second, first, second, second}) {
      const std::size_t start = out.size();
      codec.Text(out, value);
      EXPECT_EQ(std::string(out.view().substr(start)), TextValue(type, value)) << type << " " << value;
    }
    const std::size_t before = out.size();
    EXPECT_THROW(codec.Text(out, "not a value"), std::exception) << type;
    out.Truncate(before);
    codec.Text(out, first);
    EXPECT_EQ(std::string(out.view().substr(before)), TextValue(type, first)) << type;
  }
}

}  // namespace
}  // namespace mssql_cdc::tds
