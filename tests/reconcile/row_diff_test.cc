#include "reconcile/row_diff.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace mssql_cdc {
namespace {

std::shared_ptr<arrow::Table> Rows(const std::vector<std::optional<std::int32_t>>& ids,
                                   const std::vector<std::string>& names, bool with_lsn) {
  arrow::Int32Builder id;
  arrow::StringBuilder name, lsn;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE((ids[i] ? id.Append(*ids[i]) : id.AppendNull()).ok());
    EXPECT_TRUE(name.Append(names[i]).ok());
    EXPECT_TRUE(lsn.Append("0x" + std::to_string(i)).ok());
  }
  std::vector<std::shared_ptr<arrow::Field>> fields{arrow::field("id", arrow::int32()), arrow::field("name", arrow::utf8())};
  std::vector<std::shared_ptr<arrow::Array>> columns{*id.Finish(), *name.Finish()};
  if (with_lsn) {
    fields.push_back(arrow::field("_start_lsn", arrow::utf8()));
    columns.push_back(*lsn.Finish());
  }
  return arrow::Table::Make(arrow::schema(fields), columns);
}

TEST(RowDiffTest, NamesEveryKindOfDifference) {
  const auto source = Rows({1, 2, 3, std::nullopt}, {"a", "b", "c", "n"}, false);
  const auto lake = Rows({std::nullopt, 1, 3, 4}, {"n", "a", "C", "d"}, true);
  const auto failures = DiffRows(*source, *lake, {"id"}, {"name"}, true);
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures[0].failure_type, kMissingTarget);
  EXPECT_EQ(failures[0].key.dump(), R"({"id":2})");
  EXPECT_EQ(failures[1].failure_type, kRecordDiff);
  EXPECT_EQ(failures[1].key.dump(), R"({"id":3})");
  EXPECT_EQ(failures[1].detail, R"({"columns":["name"],"silver_start_lsn":"0x2"})");
  EXPECT_EQ(failures[2].failure_type, kMissingSource);
  EXPECT_EQ(failures[2].key.dump(), R"({"id":4})");
  // Looked up by the source's keys only: a lake row of another range is no failure.
  EXPECT_EQ(DiffRows(*source, *lake, {"id"}, {"name"}, false).size(), 2u);
}

}  // namespace
}  // namespace mssql_cdc
