#include "core/spark_columns.h"

#include <arrow/type.h>
#include <gtest/gtest.h>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

std::string ErrorOf(const char* ddl) {
  try {
    ParseSparkColumns(ddl);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SparkColumnsTest, NamesAndTypesAsSparkWritesThem) {
  const auto fields = ParseSparkColumns(
      " order_id BIGINT,`Qty (kg)` decimal(18, 2), status string, seen Timestamp_NTZ, at TIMESTAMP,"
      " flag BOOLEAN, code VARCHAR(10), n int, s SHORT, b byte, d DATE, raw BINARY, x DOUBLE, y REAL");
  ASSERT_EQ(fields.size(), 14u);
  EXPECT_EQ(fields[0]->name(), "order_id");
  EXPECT_TRUE(fields[0]->type()->Equals(arrow::int64()));
  EXPECT_EQ(fields[1]->name(), "Qty (kg)");
  EXPECT_TRUE(fields[1]->type()->Equals(arrow::decimal128(18, 2)));
  EXPECT_TRUE(fields[2]->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(fields[3]->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_TRUE(fields[4]->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_TRUE(fields[6]->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(fields[8]->type()->Equals(arrow::int16()));
  EXPECT_TRUE(fields[9]->type()->Equals(arrow::int8()));
  EXPECT_TRUE(fields[13]->type()->Equals(arrow::float32()));
  EXPECT_TRUE(ParseSparkColumns("a DECIMAL")[0]->type()->Equals(arrow::decimal128(10, 0)));
}

TEST(SparkColumnsTest, EachMistakeIsOneMessageSayingTheForm) {
  EXPECT_NE(ErrorOf("").find("the list is empty"), std::string::npos);
  EXPECT_NE(ErrorOf("a INT,").find("empty entry"), std::string::npos);
  EXPECT_NE(ErrorOf("a").find("column 'a' has no type"), std::string::npos);
  EXPECT_NE(ErrorOf("a INT, A STRING").find("listed twice"), std::string::npos);
  EXPECT_NE(ErrorOf("a MAP<STRING,INT>").find("not a Spark type this option takes"), std::string::npos);
  EXPECT_NE(ErrorOf("a DECIMAL(40,2)").find("precision 1 to 38"), std::string::npos);
  EXPECT_NE(ErrorOf("a INT(3)").find("takes no arguments"), std::string::npos);
  EXPECT_NE(ErrorOf("`a INT").find("not closed"), std::string::npos);
  EXPECT_NE(ErrorOf("a INT").find(""), std::string::npos);
  EXPECT_EQ(ErrorOf("a INT"), "");
  EXPECT_NE(ErrorOf("a BLOB").find("e.g. columns='order_id INT"), std::string::npos);
}

}  // namespace
}  // namespace mssql_cdc
