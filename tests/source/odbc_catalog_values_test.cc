// Values of the CDC catalog procedures as the odbc backend reads them: index_column_list and
// the type columns of sp_cdc_get_captured_columns back to the SqlType of the declaration.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "source/odbc/catalog_values.h"
#include "source/odbc/decimal_text.h"
#include "source/odbc/lsn_slots.h"
#include "source/odbc/utf16.h"
#include "source/sim/sqlite_column_decoders.h"

namespace mssql_cdc::odbc {
namespace {

using Names = std::vector<std::string>;

TEST(IndexColumnListTest, BracketedNamesWithEscapes) {
  EXPECT_EQ(ParseIndexColumnList("[a], [b]"), (Names{"a", "b"}));
  EXPECT_EQ(ParseIndexColumnList("[order id]"), (Names{"order id"}));
  EXPECT_EQ(ParseIndexColumnList("[we]]ird], [x,y], [ü]"), (Names{"we]ird", "x,y", "ü"}));
  EXPECT_EQ(ParseIndexColumnList("[[a]"), (Names{"[a"}));
  EXPECT_EQ(ParseIndexColumnList(""), Names{});
  EXPECT_EQ(ParseIndexColumnList("a, b"), (Names{"a", "b"}));
  EXPECT_THROW(ParseIndexColumnList("[a], [b"), SourceError);
}

SqlType FromCatalog(std::string type, std::optional<std::int64_t> length,
                    std::optional<std::int64_t> precision, std::optional<std::int64_t> scale,
                    std::optional<std::int64_t> datetime_precision) {
  return SqlTypeFromCatalog(CatalogType{std::move(type), length, precision, scale, datetime_precision},
                            "c");
}

TEST(SqlTypeFromCatalogTest, RebuildsEveryDeclaration) {
  struct Case {
    CatalogType catalog;
    const char* declaration;
  };
  const std::vector<Case> cases = {
      {{"int", std::nullopt, 10, 0, std::nullopt}, "int"},
      {{"bit", std::nullopt, 1, 0, std::nullopt}, "bit"},
      {{"tinyint", std::nullopt, 3, 0, std::nullopt}, "tinyint"},
      {{"bigint", std::nullopt, 19, 0, std::nullopt}, "bigint"},
      {{"nvarchar", 50, std::nullopt, std::nullopt, std::nullopt}, "nvarchar(50)"},
      {{"NVARCHAR", -1, std::nullopt, std::nullopt, std::nullopt}, "nvarchar(max)"},
      {{"varchar", 8000, std::nullopt, std::nullopt, std::nullopt}, "varchar(8000)"},
      {{"char", 3, std::nullopt, std::nullopt, std::nullopt}, "char(3)"},
      {{"nchar", 1, std::nullopt, std::nullopt, std::nullopt}, "nchar(1)"},
      {{"varbinary", -1, std::nullopt, std::nullopt, std::nullopt}, "varbinary(max)"},
      {{"binary", 16, std::nullopt, std::nullopt, std::nullopt}, "binary(16)"},
      {{"decimal", std::nullopt, 38, 10, std::nullopt}, "decimal(38,10)"},
      {{"numeric", std::nullopt, 5, 2, std::nullopt}, "numeric(5,2)"},
      {{"money", std::nullopt, 19, 4, std::nullopt}, "money"},
      {{"smallmoney", std::nullopt, 10, 4, std::nullopt}, "smallmoney"},
      {{"float", std::nullopt, 53, std::nullopt, std::nullopt}, "float"},
      {{"float", std::nullopt, 24, std::nullopt, std::nullopt}, "float(24)"},
      {{"real", std::nullopt, 24, std::nullopt, std::nullopt}, "real"},
      {{"datetime2", std::nullopt, std::nullopt, std::nullopt, 3}, "datetime2(3)"},
      {{"datetime2", std::nullopt, std::nullopt, 7, std::nullopt}, "datetime2(7)"},
      {{"time", std::nullopt, std::nullopt, std::nullopt, 0}, "time(0)"},
      {{"datetimeoffset", std::nullopt, std::nullopt, std::nullopt, 5}, "datetimeoffset(5)"},
      {{"datetime", std::nullopt, std::nullopt, std::nullopt, 3}, "datetime"},
      {{"smalldatetime", std::nullopt, std::nullopt, std::nullopt, 0}, "smalldatetime"},
      {{"date", std::nullopt, std::nullopt, std::nullopt, 0}, "date"},
      {{"xml", -1, std::nullopt, std::nullopt, std::nullopt}, "xml"},
      {{"ntext", 1073741823, std::nullopt, std::nullopt, std::nullopt}, "ntext"},
      {{"text", 2147483647, std::nullopt, std::nullopt, std::nullopt}, "text"},
      {{"image", 2147483647, std::nullopt, std::nullopt, std::nullopt}, "image"},
      {{"uniqueidentifier", std::nullopt, std::nullopt, std::nullopt, std::nullopt}, "uniqueidentifier"},
      {{"timestamp", 8, std::nullopt, std::nullopt, std::nullopt}, "timestamp"},
      {{"rowversion", 8, std::nullopt, std::nullopt, std::nullopt}, "rowversion"},
      {{"sql_variant", std::nullopt, std::nullopt, std::nullopt, std::nullopt}, "sql_variant"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(SqlTypeFromCatalog(c.catalog, "c"), SqlType::Parse(c.declaration))
        << c.declaration << " from " << c.catalog.data_type;
  }
}

TEST(SqlTypeFromCatalogTest, ValuesThatMakeNoTypeAreTheServersFault) {
  EXPECT_THROW(FromCatalog("decimal", std::nullopt, 50, 2, std::nullopt), SourceError);
  EXPECT_THROW(FromCatalog("nvarchar", 0, std::nullopt, std::nullopt, std::nullopt), SourceError);
  EXPECT_THROW(FromCatalog("time", std::nullopt, std::nullopt, std::nullopt, 9), SourceError);
}

TEST(LsnFromBytesTest, TenBytesOrASourceError) {
  EXPECT_EQ(LsnFromBytes(std::nullopt, "x"), std::nullopt);
  const std::string ten("\x00\x00\x00\x2A\x00\x00\x01\x00\x00\x01", 10);
  EXPECT_EQ(LsnFromBytes(ten, "x"), Lsn::Parse("0x0000002A000001000001"));
  try {
    LsnFromBytes(std::string(12, '\x01'), "sys.fn_cdc_get_max_lsn");
    FAIL() << "no SourceError";
  } catch (const SourceError& e) {
    EXPECT_NE(std::string(e.what()).find("the server returned an LSN of 12 bytes"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(LsnFromBytes(std::string(), "x"), SourceError);
}

TEST(DecimalTextTest, ReadsDriverTextAtTheColumnsScale) {
  auto text_of = [](std::string_view text, int precision, int scale) -> std::string {
    const auto value = DecimalFromText(text, precision, scale);
    return value ? value->ToString(scale) : "none";
  };
  EXPECT_EQ(text_of("-12.3400", 18, 4), "-12.3400");
  EXPECT_EQ(text_of("12.5", 18, 4), "12.5000");
  EXPECT_EQ(text_of(".5", 5, 2), "0.50");
  EXPECT_EQ(text_of("-.5", 5, 2), "-0.50");
  EXPECT_EQ(text_of("100", 5, 2), "100.00");
  EXPECT_EQ(text_of("0", 1, 0), "0");
  EXPECT_EQ(text_of("9999999999999999999999999999.9999999999", 38, 10),
            "9999999999999999999999999999.9999999999");
  EXPECT_EQ(text_of("-99999999999999999999999999999999999999", 38, 0),
            "-99999999999999999999999999999999999999");
  EXPECT_EQ(text_of("922337203685477.5807", 19, 4), "922337203685477.5807");
  EXPECT_EQ(text_of("-0.0000000001", 38, 10), "-1E-10");
  EXPECT_EQ(text_of("1000", 5, 2), "none");     // four integer digits in decimal(5,2)
  EXPECT_EQ(text_of("1.234", 5, 2), "none");    // more fraction digits than the scale
  EXPECT_EQ(text_of("1e5", 18, 0), "none");
  EXPECT_EQ(text_of("", 18, 0), "none");
  EXPECT_EQ(text_of("-", 18, 0), "none");
  EXPECT_EQ(text_of("1.2.3", 18, 2), "none");
  // The same values as the sim backend's parser of stored decimals, digit for digit.
  for (const char* text : {"0.0001", "-123.40", "123456789012345678901234.5678", "7"}) {
    const auto parts = ParseStoredDecimal(text, 38, 4);
    ASSERT_TRUE(parts) << text;
    EXPECT_EQ(DecimalFromText(text, 38, 4), arrow::Decimal128(parts->high, parts->low)) << text;
  }
}

TEST(Utf16Test, RoundTripsAndReplacesBrokenText) {
  const std::string text = "Grüße, 世界 🚀";
  const Utf16String units = Utf8ToUtf16(text);
  EXPECT_EQ(units.size(), 12u);  // the rocket is a surrogate pair
  EXPECT_EQ(Utf16ToUtf8(units.data(), units.size()), text);
  const Utf16Unit lone[] = {u'a', 0xD800, u'b', 0xDC00};
  EXPECT_EQ(Utf16ToUtf8(lone, 4), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(Utf8ToUtf16("\xC3"), Utf16String(1, 0xFFFD));
  // A piece ending in a high surrogate leaves it for the next piece.
  // Long ASCII runs go four units at a time; a non-ASCII unit anywhere breaks out.
  const std::string ascii = "plain ascii text of some length, then: é and more ascii";
  const Utf16String ascii_units = Utf8ToUtf16(ascii);
  EXPECT_EQ(Utf16ToUtf8(ascii_units.data(), ascii_units.size()), ascii);
  EXPECT_EQ(Utf16PieceEnd(units.data(), 11), 10u);
  EXPECT_EQ(Utf16PieceEnd(units.data(), 12), 12u);
}

}  // namespace
}  // namespace mssql_cdc::odbc
