#include "core/sql_type.h"

#include <arrow/type.h>
#include <gtest/gtest.h>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

struct Mapping {
  const char* declaration;
  std::shared_ptr<arrow::DataType> arrow_type;
  const char* spark_type;
};

TEST(SqlType, MapsEveryTypeOfTheContract) {
  const Mapping cases[] = {
      {"bit", arrow::boolean(), "BOOLEAN"},
      {"tinyint", arrow::int16(), "SMALLINT"},
      {"smallint", arrow::int16(), "SMALLINT"},
      {"int", arrow::int32(), "INT"},
      {"bigint", arrow::int64(), "BIGINT"},
      {"real", arrow::float32(), "FLOAT"},
      {"float", arrow::float64(), "DOUBLE"},
      {"decimal(38,10)", arrow::decimal128(38, 10), "DECIMAL(38,10)"},
      {"numeric(5)", arrow::decimal128(5, 0), "DECIMAL(5,0)"},
      {"decimal", arrow::decimal128(18, 0), "DECIMAL(18,0)"},
      {"money", arrow::decimal128(19, 4), "DECIMAL(19,4)"},
      {"smallmoney", arrow::decimal128(10, 4), "DECIMAL(10,4)"},
      {"date", arrow::date32(), "DATE"},
      {"datetime", arrow::timestamp(arrow::TimeUnit::MICRO), "TIMESTAMP_NTZ"},
      {"datetime2(7)", arrow::timestamp(arrow::TimeUnit::MICRO), "TIMESTAMP_NTZ"},
      {"smalldatetime", arrow::timestamp(arrow::TimeUnit::MICRO), "TIMESTAMP_NTZ"},
      {"datetimeoffset(3)", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), "TIMESTAMP"},
      {"time(7)", arrow::utf8(), "STRING"},
      {"char(10)", arrow::utf8(), "STRING"},
      {"varchar(max)", arrow::utf8(), "STRING"},
      {"nchar(3)", arrow::utf8(), "STRING"},
      {"NVARCHAR(MAX)", arrow::utf8(), "STRING"},
      {"text", arrow::utf8(), "STRING"},
      {"ntext", arrow::utf8(), "STRING"},
      {"xml", arrow::utf8(), "STRING"},
      {"uniqueidentifier", arrow::utf8(), "STRING"},
      {"binary(16)", arrow::binary(), "BINARY"},
      {"varbinary(max)", arrow::binary(), "BINARY"},
      {"image", arrow::binary(), "BINARY"},
      {"timestamp", arrow::binary(), "BINARY"},
      {"rowversion", arrow::binary(), "BINARY"},
  };
  for (const auto& c : cases) {
    SqlType t = SqlType::Parse(c.declaration);
    EXPECT_TRUE(ArrowTypeFor(t, "c")->Equals(*c.arrow_type)) << c.declaration;
    EXPECT_EQ(SparkTypeFor(t, "c"), c.spark_type) << c.declaration;
  }
}

TEST(SqlType, ParsesDeclarationsWithDefaults) {
  EXPECT_EQ(SqlType::Parse("NVARCHAR(MAX)").ToString(), "nvarchar(max)");
  EXPECT_TRUE(SqlType::Parse("varbinary(max)").IsMax());
  EXPECT_EQ(SqlType::Parse("decimal( 18 , 2 )").ToString(), "decimal(18,2)");
  EXPECT_EQ(SqlType::Parse("datetime2").ToString(), "datetime2(7)");
  EXPECT_EQ(SqlType::Parse("char").max_length, 1);
  EXPECT_EQ(SqlType::Parse("money").scale, 4);
}

TEST(SqlType, RejectsMalformedDeclarations) {
  for (const char* bad : {"", "decimal(39,0)", "decimal(10,11)", "nvarchar(0)", "char(max)",
                          "datetime2(8)", "int(4)", "varchar(abc)", "varchar(10"}) {
    EXPECT_THROW(SqlType::Parse(bad), ConfigError) << bad;
  }
}

TEST(SqlType, RefusesUnmappedTypesNamingColumnAndType) {
  for (const char* name : {"sql_variant", "geography", "geometry", "hierarchyid", "vector"}) {
    try {
      ArrowTypeFor(SqlType::Parse(name), "shape");
      FAIL() << name;
    } catch (const UnsupportedTypeError& e) {
      std::string message = e.what();
      EXPECT_NE(message.find("'shape'"), std::string::npos) << message;
      EXPECT_NE(message.find(name), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace mssql_cdc
