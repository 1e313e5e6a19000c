#include "core/sql_type.h"

#include <arrow/type.h>
#include <gtest/gtest.h>

#include <set>
#include <utility>

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

TEST(SqlType, NamesEachKindOnceAndGroupsItsFamily) {
  const std::pair<const char*, SqlTypeFamily> names[] = {
      {"bit", SqlTypeFamily::kInteger}, {"tinyint", SqlTypeFamily::kInteger},
      {"smallint", SqlTypeFamily::kInteger}, {"int", SqlTypeFamily::kInteger},
      {"bigint", SqlTypeFamily::kInteger}, {"real", SqlTypeFamily::kFloatingPoint},
      {"float", SqlTypeFamily::kFloatingPoint}, {"decimal", SqlTypeFamily::kDecimal},
      {"numeric", SqlTypeFamily::kDecimal}, {"money", SqlTypeFamily::kDecimal},
      {"smallmoney", SqlTypeFamily::kDecimal}, {"date", SqlTypeFamily::kTemporal},
      {"time", SqlTypeFamily::kTemporal}, {"datetime", SqlTypeFamily::kTemporal},
      {"datetime2", SqlTypeFamily::kTemporal}, {"smalldatetime", SqlTypeFamily::kTemporal},
      {"datetimeoffset", SqlTypeFamily::kTemporal}, {"char", SqlTypeFamily::kCharacter},
      {"varchar", SqlTypeFamily::kCharacter}, {"nchar", SqlTypeFamily::kCharacter},
      {"nvarchar", SqlTypeFamily::kCharacter}, {"text", SqlTypeFamily::kCharacter},
      {"ntext", SqlTypeFamily::kCharacter}, {"xml", SqlTypeFamily::kCharacter},
      {"binary", SqlTypeFamily::kBinary}, {"varbinary", SqlTypeFamily::kBinary},
      {"image", SqlTypeFamily::kBinary}, {"timestamp", SqlTypeFamily::kRowVersion},
      {"rowversion", SqlTypeFamily::kRowVersion},
      {"uniqueidentifier", SqlTypeFamily::kUniqueIdentifier},
      {"sql_variant", SqlTypeFamily::kUnsupported}, {"geography", SqlTypeFamily::kUnsupported},
      {"geometry", SqlTypeFamily::kUnsupported}, {"hierarchyid", SqlTypeFamily::kUnsupported},
  };
  std::set<SqlTypeKind> seen;
  for (const auto& [name, family] : names) {
    const SqlTypeKind kind = SqlType::Parse(name).kind();
    EXPECT_NE(kind, SqlTypeKind::kUnknown) << name;
    EXPECT_TRUE(seen.insert(kind).second) << name << " shares its kind";
    EXPECT_EQ(SqlTypeFamilyOf(kind), family) << name;
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(SqlTypeKind::kUnknown));  // every kind named
  EXPECT_EQ(SqlTypeKindOf("vector"), SqlTypeKind::kUnknown);
  EXPECT_EQ(SqlTypeKindOf("INT"), SqlTypeKind::kUnknown);  // names are lower case, as Parse makes them
  EXPECT_TRUE(SqlType::Parse("NVarChar(5)").IsOneOf({SqlTypeKind::kNChar, SqlTypeKind::kNVarChar}));
}

}  // namespace
}  // namespace mssql_cdc
