#include "schema_change/type_holds.h"

#include <arrow/type.h>
#include <gtest/gtest.h>

#include "core/sql_type.h"

namespace mssql_cdc {
namespace {

// Whether a column declared `column` holds the values of a column declared `incoming`.
bool Holds(const char* column, const char* incoming) {
  return TypeHolds(*ArrowTypeFor(SqlType::Parse(column), "c"),
                   *ArrowTypeFor(SqlType::Parse(incoming), "c"));
}

TEST(TypeHoldsTest, TheRuleOfTheSpec) {
  // Identical types, and types the mapping makes identical.
  EXPECT_TRUE(Holds("int", "int"));
  EXPECT_TRUE(Holds("varchar(10)", "nvarchar(max)"));
  EXPECT_TRUE(Holds("smallint", "tinyint"));
  // Integers widen, never narrow.
  EXPECT_TRUE(Holds("bigint", "int"));
  EXPECT_TRUE(Holds("int", "smallint"));
  EXPECT_FALSE(Holds("int", "bigint"));
  EXPECT_FALSE(Holds("smallint", "int"));
  // float to double; integers up to int in a double, not bigint.
  EXPECT_TRUE(Holds("float", "real"));
  EXPECT_FALSE(Holds("real", "float"));
  EXPECT_TRUE(Holds("float", "int"));
  EXPECT_FALSE(Holds("float", "bigint"));
  // date in a timestamp without time zone, not in one with.
  EXPECT_TRUE(Holds("datetime2", "date"));
  EXPECT_FALSE(Holds("datetimeoffset", "date"));
  EXPECT_FALSE(Holds("date", "datetime2"));
  // Integers in decimals with enough integer digits: 5, 10, 20.
  EXPECT_TRUE(Holds("decimal(5,0)", "smallint"));
  EXPECT_FALSE(Holds("decimal(6,2)", "smallint"));
  EXPECT_TRUE(Holds("decimal(10,0)", "int"));
  EXPECT_FALSE(Holds("decimal(19,0)", "bigint"));
  EXPECT_TRUE(Holds("decimal(22,2)", "bigint"));
  // Decimals: at least the scale and the integer digits.
  EXPECT_TRUE(Holds("decimal(12,3)", "decimal(10,2)"));
  EXPECT_FALSE(Holds("decimal(12,1)", "decimal(10,2)"));
  EXPECT_FALSE(Holds("decimal(10,3)", "decimal(10,2)"));
  // Nothing else: strings, numbers, binary do not cross.
  EXPECT_FALSE(Holds("nvarchar(50)", "int"));
  EXPECT_FALSE(Holds("bigint", "decimal(10,0)"));
  EXPECT_FALSE(Holds("varbinary(10)", "varchar(10)"));
}

}  // namespace
}  // namespace mssql_cdc
