#include "tds/encoded_values.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/errors.h"
#include "tds/statement_reply.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::CollectingSink;

using Value = std::function<void(ResultSet&)>;

// Eleven columns, so that a row's null bitmap spans two bytes.
std::vector<ResultColumn> Columns() {
  std::vector<ResultColumn> columns;
  for (const char* type : {"int", "varchar(10)", "decimal(10,2)", "nvarchar(max)", "bigint",
                           "datetime2(7)", "varbinary(8)", "float", "bit", "nvarchar(20)",
                           "varchar(max)"}) {
    columns.push_back(ResultColumn{type, SqlType::Parse(type), true});
  }
  return columns;
}

std::vector<Value> Row(bool with_nulls) {
  const Value null = [](ResultSet& r) { r.Null(); };
  return {[](ResultSet& r) { r.Int(7); },
          with_nulls ? null : [](ResultSet& r) { r.Text("abc"); },
          [](ResultSet& r) { r.Text("-12.34"); },
          [](ResultSet& r) { r.Text("héllo"); },
          with_nulls ? null : [](ResultSet& r) { r.Int(1234567890123); },
          [](ResultSet& r) { r.Text("2026-01-02 03:04:05.1234567"); },
          [](ResultSet& r) { r.Binary(std::string("\x01\x00\xFF", 3)); },
          [](ResultSet& r) { r.Float(0.5); },
          with_nulls ? null : [](ResultSet& r) { r.Int(1); },
          [](ResultSet& r) { r.Text("ünï"); },
          with_nulls ? null : [](ResultSet& r) { r.Text(std::string(9000, 'x')); }};
}

// The reply to a result set of Columns() with `rows`, each row's values from `first` on
// given encoded (all of them one by one when `first` is past the end).
std::string Reply(const std::vector<std::vector<Value>>& rows, std::size_t first,
                  bool use_nbcrow = true) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  TokenStream stream(writer);
  const std::string server = "sim";
  StatementReply reply(stream, StatementReply::Framing::kBatch, use_nbcrow, server);
  const auto columns = Columns();
  ResultSet& out = reply.BeginResult(columns);
  EncodedValuesWriter encoder(
      std::vector<ResultColumn>(columns.begin() + std::min(first, columns.size()), columns.end()));
  for (const auto& row : rows) {
    encoder.Clear();
    for (std::size_t i = 0; i < row.size(); ++i) row[i](i < first ? out : encoder);
    if (first < row.size()) {
      encoder.EndRow();
      out.EncodedValues(encoder.row(), row.size() - first);
    }
    out.EndRow();
  }
  reply.Finish();
  stream.EndMessage();
  return sink.Payload();
}

TEST(EncodedValuesTest, ARowSentEncodedIsTheRowSentValueByValue) {
  const std::vector<std::vector<Value>> rows = {Row(false), Row(true), Row(false)};
  const std::string expected = Reply(rows, 99);
  // Rows without a NULL go as ROW, with one as NBCROW, whatever the split.
  for (std::size_t first : {0u, 1u, 3u, 8u, 9u, 10u}) {
    EXPECT_EQ(Reply(rows, first), expected) << "encoded from column " << first;
  }
}

TEST(EncodedValuesTest, EncodedValuesNestInsideOthers) {
  const auto columns = Columns();
  const auto row = Row(true);
  EncodedValuesWriter whole(columns);
  for (const auto& value : row) value(whole);
  whole.EndRow();
  EncodedValuesWriter tail(std::vector<ResultColumn>(columns.begin() + 3, columns.end()));
  for (std::size_t i = 3; i < row.size(); ++i) row[i](tail);
  tail.EndRow();
  EncodedValuesWriter spliced(columns);
  for (std::size_t i = 0; i < 3; ++i) row[i](spliced);
  spliced.EncodedValues(tail.row(), row.size() - 3);
  spliced.EndRow();
  EXPECT_EQ(spliced.row(), whole.row());
}

TEST(EncodedValuesTest, OnlyAClientReadingNbcRowTakesThem) {
  CollectingSink sink;
  MessageWriter writer(sink, 51);
  TokenStream stream(writer);
  const std::string server = "sim";
  StatementReply old_client(stream, StatementReply::Framing::kBatch, false, server);
  ResultSet& out = old_client.BeginResult(Columns());
  EXPECT_FALSE(out.TakesEncodedValues());
  EXPECT_THROW(out.EncodedValues(std::string(2, '\0'), 11), InternalError);
  StatementReply new_client(stream, StatementReply::Framing::kBatch, true, server);
  EXPECT_TRUE(new_client.BeginResult(Columns()).TakesEncodedValues());
}

TEST(EncodedValuesTest, AValueThatDoesNotFitLeavesNothingForTheNextRow) {
  EncodedValuesWriter encoder({ResultColumn{"a", SqlType::Parse("int"), true},
                               ResultColumn{"b", SqlType::Parse("decimal(4,2)"), true}});
  encoder.Int(1);
  EXPECT_THROW(encoder.Text("123.45"), SourceError);
  encoder.Clear();
  encoder.Null();
  encoder.Text("12.34");
  encoder.EndRow();
  EncodedValuesWriter again({ResultColumn{"a", SqlType::Parse("int"), true},
                             ResultColumn{"b", SqlType::Parse("decimal(4,2)"), true}});
  again.Null();
  again.Text("12.34");
  again.EndRow();
  EXPECT_EQ(encoder.row(), again.row());
  EXPECT_EQ(static_cast<std::uint8_t>(encoder.row()[0]), 0x01);  // column a is NULL
  EXPECT_THROW(encoder.Int(5), InternalError);                    // a third value of two
}

TEST(EncodedValuesTest, TooFewValuesIsAnInternalError) {
  EncodedValuesWriter encoder({ResultColumn{"a", SqlType::Parse("int"), true},
                               ResultColumn{"b", SqlType::Parse("int"), true}});
  encoder.Int(1);
  EXPECT_THROW(encoder.EndRow(), InternalError);
}

}  // namespace
}  // namespace mssql_cdc::tds
