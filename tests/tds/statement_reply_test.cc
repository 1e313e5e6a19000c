#include "tds/statement_reply.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/errors.h"
#include "tds/rpc_runner.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::CollectingSink;
using testing::Hex;

ResultColumn Column(std::string name, const std::string& type, bool nullable = true) {
  return ResultColumn{std::move(name), SqlType::Parse(type), nullable};
}

// A reply message built through the real writer chain, its payload read back.
class ReplyFixture : public ::testing::Test {
 protected:
  ReplyFixture() : writer_(sink_, 51), stream_(writer_) {}

  std::string Send() {
    stream_.EndMessage();
    return sink_.Payload();
  }

  CollectingSink sink_;
  MessageWriter writer_;
  TokenStream stream_;
  std::string server_ = "sim";
};

TEST_F(ReplyFixture, OneResultSetAsInTheSpecBatchResponse) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("bar", "varchar(3)", false)});
  rows.Text("foo");
  rows.EndRow();
  reply.Finish();
  // MS-TDS 4.7 "SQL Batch Server Response" (column flags 0: NOT NULL, not updatable).
  EXPECT_BYTES(
      "81 01 00 00 00 00 00 00 00 A7 03 00 09 04 D0 00 34 03 62 00 61 00 72 00 "
      "D1 03 00 66 6F 6F "
      "FD 10 00 C1 00 01 00 00 00 00 00 00 00",
      Send());
}

TEST_F(ReplyFixture, EveryDoneFollowedByMoreTokensCarriesDoneMore) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& first = reply.BeginResult({Column("a", "int")});
  first.Int(1);
  first.EndRow();
  first.Int(2);
  first.EndRow();
  ResultSet& second = reply.BeginResult({Column("b", "int")});
  second.Int(3);
  second.EndRow();
  reply.Finish();
  EXPECT_BYTES(
      "81 01 00 00 00 00 00 01 00 26 04 01 61 00 "
      "D1 04 01 00 00 00 D1 04 02 00 00 00 "
      "FD 11 00 C1 00 02 00 00 00 00 00 00 00 "
      "81 01 00 00 00 00 00 01 00 26 04 01 62 00 "
      "D1 04 03 00 00 00 "
      "FD 10 00 C1 00 01 00 00 00 00 00 00 00",
      Send());
}

TEST_F(ReplyFixture, AStatementWithoutResultsGetsAPlainDone) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  reply.Finish();
  EXPECT_BYTES("FD 00 00 00 00 00 00 00 00 00 00 00 00", Send());
}

TEST_F(ReplyFixture, AnInfoIsFollowedByADone) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "int")});
  rows.Int(1);
  rows.EndRow();
  reply.Info(5701, "x");
  reply.Finish();
  EXPECT_BYTES(
      "81 01 00 00 00 00 00 01 00 26 04 01 61 00 D1 04 01 00 00 00 "
      "FD 11 00 C1 00 01 00 00 00 00 00 00 00 "
      "AB 16 00 45 16 00 00 01 00 01 00 78 00 03 73 00 69 00 6D 00 00 01 00 00 00 "
      "FD 00 00 00 00 00 00 00 00 00 00 00 00",
      Send());
}

TEST_F(ReplyFixture, FailEndsTheResultThenErrorThenDoneWithErrorBit) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "int")});
  rows.Int(1);
  rows.EndRow();
  reply.Fail(ServerError{313, 3, 16, "x"});
  reply.Finish();
  EXPECT_TRUE(reply.failed());
  EXPECT_BYTES(
      "81 01 00 00 00 00 00 01 00 26 04 01 61 00 D1 04 01 00 00 00 "
      "FD 11 00 C1 00 01 00 00 00 00 00 00 00 "
      "AA 16 00 39 01 00 00 03 10 01 00 78 00 03 73 00 69 00 6D 00 00 01 00 00 00 "
      "FD 02 00 00 00 00 00 00 00 00 00 00 00",
      Send());
  EXPECT_THROW(reply.BeginResult({Column("a", "int")}), InternalError);
}

TEST_F(ReplyFixture, RowsWithNullsGoAsNbcRowOthersAsRow) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows =
      reply.BeginResult({Column("a", "int"), Column("b", "nvarchar(5)"), Column("c", "bit")});
  rows.Int(7);
  rows.Null();
  rows.Int(1);
  rows.EndRow();
  rows.Int(8);
  rows.Text("x");
  rows.Int(0);
  rows.EndRow();
  reply.Finish();
  std::string payload = Send();
  // NBCROW: bitmap 0x02 (column 1 NULL), then only the non-NULL values.
  EXPECT_NE(payload.find(Hex("D2 02 04 07 00 00 00 01 01")), std::string::npos)
      << testing::ToHex(payload);
  EXPECT_NE(payload.find(Hex("D1 04 08 00 00 00 02 00 78 00 01 00")), std::string::npos)
      << testing::ToHex(payload);
}

TEST_F(ReplyFixture, TheNullBitmapSpansBytes) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  std::vector<ResultColumn> columns;
  for (int i = 0; i < 10; ++i) {
    columns.push_back(Column(std::string("c").append(std::to_string(i)), "tinyint"));
  }
  ResultSet& rows = reply.BeginResult(columns);
  for (int i = 0; i < 10; ++i) (i == 0 || i == 9) ? rows.Null() : rows.Int(i);
  rows.EndRow();
  reply.Finish();
  std::string payload = Send();
  EXPECT_NE(payload.find(Hex("D2 01 02 01 01 01 02 01 03")), std::string::npos)
      << testing::ToHex(payload);
}

TEST_F(ReplyFixture, WithoutNbcRowNullsAreWrittenInline) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, false, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "int"), Column("b", "varbinary(4)")});
  rows.Null();
  rows.Null();
  rows.EndRow();
  reply.Finish();
  EXPECT_NE(Send().find(Hex("D1 00 FF FF FD 10")), std::string::npos);
}

TEST_F(ReplyFixture, AnExceptionMidRowDropsTheHalfRowAndSendsError50000) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "int"), Column("b", "tinyint")});
  rows.Int(1);
  rows.Int(2);
  rows.EndRow();
  rows.Int(3);
  try {
    rows.Int(300);
    FAIL() << "300 does not fit tinyint";
  } catch (const SourceError& e) {
    reply.FailWithException(e.what());
  }
  std::string payload = Send();
  EXPECT_NE(payload.find(Hex("FD 11 00 C1 00 01 00 00 00 00 00 00 00 AA")), std::string::npos)
      << "one complete row counted, then the error: " << testing::ToHex(payload);
  EXPECT_EQ(payload.find(Hex("D1 04 03 00 00 00")), std::string::npos) << "half row dropped";
  EXPECT_NE(payload.find(Hex("50 C3 00 00 01 10")), std::string::npos) << "error 50000";
  EXPECT_NE(payload.find(testing::Ucs2("'b'")), std::string::npos) << "names the column";
}

TEST_F(ReplyFixture, WrongNumberOfValuesIsAnInternalError) {
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "int")});
  rows.Int(1);
  EXPECT_THROW(rows.Int(2), InternalError);
  StatementReply other(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& short_row = other.BeginResult({Column("a", "int"), Column("b", "int")});
  short_row.Int(1);
  EXPECT_THROW(short_row.EndRow(), InternalError);
}

TEST_F(ReplyFixture, AnAttentionStopsTheRowsAtARowBoundary) {
  sink_.attention = true;
  StatementReply reply(stream_, StatementReply::Framing::kBatch, true, server_);
  ResultSet& rows = reply.BeginResult({Column("a", "nvarchar(100)")});
  const std::string text(100, 'x');
  int written = 0;
  try {
    for (; written < 100000; ++written) {
      rows.Text(text);
      rows.EndRow();
    }
    FAIL() << "the attention was not noticed";
  } catch (const ReplyAborted& aborted) {
    EXPECT_EQ(ReplyAborted::Reason::kAttention, aborted.reason());
  }
  EXPECT_LT(written, 1000) << "stopped at the first flush";
}

// A QueryHandler answering from a function.
class FunctionHandler final : public QueryHandler {
 public:
  explicit FunctionHandler(std::function<void(const Statement&, ReplyWriter&)> f)
      : f_(std::move(f)) {}
  void Execute(const Statement& statement, ReplyWriter& reply) override {
    statements.push_back(statement);
    f_(statement, reply);
  }
  std::vector<Statement> statements;

 private:
  std::function<void(const Statement&, ReplyWriter&)> f_;
};

RpcParameter TextParam(const std::string& text, bool output = false) {
  RpcParameter p;
  p.value.kind = ParamValue::Kind::kText;
  p.value.type = SqlType::Parse("ntext");
  p.value.text = text;
  p.output = output;
  return p;
}

RpcParameter IntParam(std::optional<std::int64_t> value, bool output = false,
                      std::string name = "") {
  RpcParameter p;
  p.value.name = std::move(name);
  p.value.type = SqlType::Parse("int");
  p.value.kind = value ? ParamValue::Kind::kInt : ParamValue::Kind::kNull;
  p.value.int_value = value.value_or(0);
  p.output = output;
  return p;
}

RpcCall Call(std::uint16_t id, std::vector<RpcParameter> params) {
  RpcCall call;
  call.proc_id = id;
  call.proc_name = "proc";
  call.params = std::move(params);
  return call;
}

void OneRow(const Statement&, ReplyWriter& reply) {
  ResultSet& rows = reply.BeginResult({ResultColumn{"", SqlType::Parse("int"), true}});
  rows.Int(5);
  rows.EndRow();
}

TEST_F(ReplyFixture, ExecuteSqlRepliesWithDoneInProcReturnStatusAndDoneProc) {
  FunctionHandler handler(OneRow);
  RpcRunner runner(stream_, true, server_, false);
  runner.Run(Call(proc::kExecuteSql, {TextParam("SELECT @P1"), TextParam("@P1 int"),
                                      IntParam(9, false, "@P1")}),
             handler);
  ASSERT_EQ(1u, handler.statements.size());
  EXPECT_EQ("SELECT @P1", handler.statements[0].sql);
  EXPECT_TRUE(handler.statements[0].is_rpc);
  ASSERT_EQ(1u, handler.statements[0].params.size());
  EXPECT_EQ(9, handler.statements[0].params[0].int_value);
  EXPECT_EQ("@P1", handler.statements[0].params[0].name);
  EXPECT_BYTES(
      "81 01 00 00 00 00 00 01 00 26 04 00 D1 04 05 00 00 00 "
      "FF 11 00 C1 00 01 00 00 00 00 00 00 00 "
      "79 00 00 00 00 "
      "FE 00 00 00 00 00 00 00 00 00 00 00 00",
      Send());
}

TEST_F(ReplyFixture, PrepExecReturnsTheHandleAndExecuteAndUnprepareUseIt) {
  FunctionHandler handler(OneRow);
  RpcRunner runner(stream_, true, server_, false);
  runner.Run(Call(proc::kPrepExec, {IntParam(std::nullopt, true, "@h"), TextParam("@P1 int"),
                                    TextParam("SELECT 1 WHERE @P1 = 1"), IntParam(1)}),
             handler);
  std::string prepexec = Send();
  EXPECT_NE(prepexec.find(Hex("79 00 00 00 00 AC 00 00 02 40 00 68 00 01 00 00 00 00 01 00 26 "
                              "04 04 01 00 00 00 FE 00 00")),
            std::string::npos)
      << testing::ToHex(prepexec);
  EXPECT_EQ(1u, runner.prepared_count());

  sink_.bytes.clear();
  runner.Run(Call(proc::kExecute, {IntParam(1), IntParam(42)}), handler);
  runner.Run(Call(proc::kExecute, {IntParam(1), IntParam(43)}), handler);
  std::string executes = Send();
  ASSERT_EQ(3u, handler.statements.size());
  EXPECT_EQ("SELECT 1 WHERE @P1 = 1", handler.statements[2].sql);
  EXPECT_EQ(43, handler.statements[2].params[0].int_value);
  // Two calls in one message: the first DONEPROC carries DONE_MORE, the last does not.
  EXPECT_NE(executes.find(Hex("FE 01 00 00 00 00 00 00 00 00 00 00 00 81")), std::string::npos);
  EXPECT_EQ(Hex("FE 00 00 00 00 00 00 00 00 00 00 00 00"), executes.substr(executes.size() - 13));

  sink_.bytes.clear();
  runner.Run(Call(proc::kUnprepare, {IntParam(1)}), handler);
  EXPECT_BYTES("79 00 00 00 00 FE 00 00 00 00 00 00 00 00 00 00 00 00", Send());
  EXPECT_EQ(0u, runner.prepared_count());

  sink_.bytes.clear();
  runner.Run(Call(proc::kExecute, {IntParam(1)}), handler);
  std::string unknown = Send();
  EXPECT_NE(unknown.find(Hex("AA")), std::string::npos);
  EXPECT_NE(unknown.find(Hex("F3 1F 00 00")), std::string::npos) << "error 8179";
  EXPECT_EQ(3u, handler.statements.size());
}

TEST_F(ReplyFixture, UnnamedValuesTakeTheirNamesFromTheDeclaration) {
  // mssql-jdbc numbers its markers from @P0 and sends the values without their names.
  FunctionHandler handler(OneRow);
  RpcRunner runner(stream_, true, server_, false);
  runner.Run(Call(proc::kExecuteSql, {TextParam("SELECT @P0, @P1, @P2"),
                                      TextParam("@P0 decimal(18,2),@P1 int OUTPUT, @P2 int"),
                                      IntParam(1), IntParam(2), IntParam(3, false, "@named")}),
             handler);
  runner.Run(Call(proc::kPrepExec, {IntParam(std::nullopt, true, "@h"), TextParam("@P0 int,@P1 int"),
                                    TextParam("SELECT @P0 + @P1"), IntParam(4), IntParam(5)}),
             handler);
  runner.Run(Call(proc::kExecute, {IntParam(1), IntParam(6), IntParam(7)}), handler);
  ASSERT_EQ(3u, handler.statements.size());
  const auto names = [&](std::size_t i) {
    std::string joined;
    for (const auto& param : handler.statements[i].params) joined += param.name + ";";
    return joined;
  };
  EXPECT_EQ("@P0;@P1;@named;", names(0));
  EXPECT_EQ("@P0;@P1;", names(1));
  EXPECT_EQ("@P0;@P1;", names(2));
  EXPECT_EQ(7, handler.statements[2].params[1].int_value);
}

TEST_F(ReplyFixture, ARpcErrorEndsWithDoneInProcErrorAndDoneProcError) {
  FunctionHandler handler([](const Statement&, ReplyWriter& reply) {
    reply.Fail(ServerError{313, 3, 16, "x"});
  });
  RpcRunner runner(stream_, true, server_, false);
  runner.Run(Call(proc::kExecuteSql, {TextParam("SELECT 1")}), handler);
  EXPECT_BYTES(
      "AA 16 00 39 01 00 00 03 10 01 00 78 00 03 73 00 69 00 6D 00 00 01 00 00 00 "
      "FF 03 00 00 00 00 00 00 00 00 00 00 00 "
      "79 00 00 00 00 "
      "FE 02 00 00 00 00 00 00 00 00 00 00 00",
      Send());
}

TEST_F(ReplyFixture, AHandlerExceptionBecomesError50000) {
  FunctionHandler handler([](const Statement&, ReplyWriter&) {
    throw NotFoundError("no such capture instance");
  });
  RpcRunner runner(stream_, true, server_, false);
  runner.Run(Call(proc::kExecuteSql, {TextParam("SELECT 1")}), handler);
  std::string payload = Send();
  EXPECT_NE(payload.find(Hex("AA")), std::string::npos);
  EXPECT_NE(payload.find(Hex("50 C3 00 00 01 10")), std::string::npos);
  EXPECT_NE(payload.find(testing::Ucs2("no such capture instance")), std::string::npos);
}

TEST_F(ReplyFixture, AnUnknownProcedureIsError2812) {
  FunctionHandler handler(OneRow);
  RpcRunner runner(stream_, true, server_, false);
  RpcCall call = Call(0, {});
  call.proc_name = "dbo.my_proc";
  runner.Run(call, handler);
  std::string payload = Send();
  EXPECT_NE(payload.find(Hex("FC 0A 00 00")), std::string::npos) << "error 2812";
  EXPECT_TRUE(handler.statements.empty());
}

}  // namespace
}  // namespace mssql_cdc::tds
