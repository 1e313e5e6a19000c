#include "core/table_ref.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

// Every case of tests/data/table_refs.txt.
TEST(TableRef, ReadsEachArgumentByTheOneRule) {
  std::ifstream cases(MSSQL_CDC_TEST_DATA_DIR "/table_refs.txt");
  ASSERT_TRUE(cases) << "tests/data/table_refs.txt";
  std::string line;
  int checked = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string text = line.substr(0, tab), expected = line.substr(tab + 1);
    SCOPED_TRACE("'" + text + "'");
    if (expected == "path") {
      const TableRef ref = TableRef::Parse(text, "target");
      EXPECT_TRUE(ref.is_path());
      EXPECT_EQ(ref.text(), text);
    } else if (expected.rfind("name ", 0) == 0) {
      const TableRef ref = TableRef::Parse(text, "target");
      ASSERT_TRUE(ref.is_name());
      EXPECT_EQ(ref.QuotedName(), expected.substr(5));
    } else {
      ASSERT_EQ(expected.rfind("error ", 0), 0u) << line;
      try {
        TableRef::Parse(text, "target");
        ADD_FAILURE() << "no error";
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(expected.substr(6)), std::string::npos) << message;
        EXPECT_EQ(message.rfind("target=", 0), 0u) << message;
        EXPECT_NE(message.find("contains '/' or ':'"), std::string::npos) << message;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(TableRef, SchemaOfANameIsAllButItsLastPart) {
  EXPECT_EQ(TableRef::Parse("t", "x").QuotedSchema(), "");
  EXPECT_EQ(TableRef::Parse("ops.t", "x").QuotedSchema(), "`ops`");
  EXPECT_EQ(TableRef::Parse("main.ops.t", "x").QuotedSchema(), "`main`.`ops`");
  EXPECT_EQ(TableRef::Parse("main.ops.t", "x").parts(),
            (std::vector<std::string>{"main", "ops", "t"}));
}

TEST(TableRef, QuotesLiteralsAndIdentifiersForSql) {
  EXPECT_EQ(SqlStringLiteral("it's a \\ test"), "'it\\'s a \\\\ test'");
  EXPECT_EQ(QuoteIdentifier("a`b"), "`a``b`");
}

}  // namespace
}  // namespace mssql_cdc
