// SQLBatch, transaction-manager and RPC requests parsed from the MS-TDS examples and from
// messages built the way FreeTDS and ODBC Driver 18 send them.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "tds/requests.h"
#include "tds/rpc_request.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::Hex;
using testing::Le16;
using testing::Le32;
using testing::Ucs2;

const std::string kAllHeaders =
    Hex("16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 01 00 00 00 00");
const std::string kCollation = Hex("09 04 D0 00 34");

TEST(SqlBatch, TheSpecRequest) {
  // MS-TDS 4.6 "SQL Batch Client Request".
  const std::string payload = kAllHeaders + Hex(
      "0A 00 73 00 65 00 6C 00 65 00 63 00 74 00 20 00 27 00 66 00 6F 00 6F 00 27 00 20 00 61 "
      "00 73 00 20 00 27 00 62 00 61 00 72 00 27 00 0A 00 20 00 20 00 20 00 20 00 20 00 20 00 "
      "20 00 20 00");
  EXPECT_EQ("\nselect 'foo' as 'bar'\n        ", ParseSqlBatch(payload));
}

TEST(SqlBatch, TextWithoutHeadersAndNonAscii) {
  EXPECT_EQ("SELECT N'\xC3\xA9'", ParseSqlBatch(Ucs2("SELECT N'") + Hex("E9 00 27 00")));
}

TEST(SqlBatch, MalformedHeadersAreRejected) {
  // TotalLength 0x0E but an entry claiming 0x40 bytes.
  EXPECT_THROW(ParseSqlBatch(Hex("0E 00 00 00 40 00 00 00 02 00 00 00 00 00") + Ucs2("x")),
               SourceError);
}

TEST(TransactionManager, TheSpecRequestAndBeginCommitRollback) {
  // MS-TDS 4.13 "Transaction Manager Request": request type 0x16.
  TransactionRequest request = ParseTransactionRequest(kAllHeaders + Hex("16 00"));
  EXPECT_EQ(0x16, request.request_type);
  EXPECT_EQ(TransactionRequest::Kind::kOther, request.kind);

  request = ParseTransactionRequest(kAllHeaders + Hex("05 00 02 00"));
  EXPECT_EQ(TransactionRequest::Kind::kBegin, request.kind);

  // Commit, no name, fBeginXact, isolation, no new name: what FreeTDS sends.
  request = ParseTransactionRequest(kAllHeaders + Hex("07 00 00 01 00 00"));
  EXPECT_EQ(TransactionRequest::Kind::kCommit, request.kind);
  EXPECT_TRUE(request.begin_after);

  request = ParseTransactionRequest(kAllHeaders + Hex("08 00 00 00"));
  EXPECT_EQ(TransactionRequest::Kind::kRollback, request.kind);
  EXPECT_FALSE(request.begin_after);
}

TEST(Rpc, TheSpecRequest) {
  // MS-TDS 4.8 "RPC Client Request": foo3 with one defaulted INTN(2) parameter.
  auto calls = ParseRpcRequest(
      kAllHeaders + Hex("04 00 66 00 6F 00 6F 00 33 00 00 00 00 02 26 02 00"));
  ASSERT_EQ(1u, calls.size());
  EXPECT_EQ("foo3", calls[0].proc_name);
  EXPECT_EQ(0, calls[0].proc_id);
  ASSERT_EQ(1u, calls[0].params.size());
  EXPECT_EQ("", calls[0].params[0].value.name);
  EXPECT_EQ(ParamValue::Kind::kNull, calls[0].params[0].value.kind);
  EXPECT_EQ("smallint", calls[0].params[0].value.type.ToString());
  EXPECT_FALSE(calls[0].params[0].output);
}

// Parameter: B_VARCHAR name, status flags, then TYPE_INFO and value bytes.
std::string Param(const std::string& type_and_value, const std::string& name = "",
                  std::uint8_t status = 0) {
  std::string out(1, static_cast<char>(name.size()));
  out += Ucs2(name);
  out.push_back(static_cast<char>(status));
  return out + type_and_value;
}

std::string Ntext(const std::string& ascii) {
  const std::string text = Ucs2(ascii);
  return Hex("63") + Le32(0x7FFFFFFF) + kCollation + Le32(static_cast<std::uint32_t>(text.size())) +
         text;
}

std::string Nvarchar(const std::string& ascii, std::uint16_t max_bytes = 8000) {
  const std::string text = Ucs2(ascii);
  return Hex("E7") + Le16(max_bytes) + kCollation +
         Le16(static_cast<std::uint16_t>(text.size())) + text;
}

TEST(Rpc, ExecuteSqlAsFreeTdsSendsIt) {
  const std::string lsn = Hex("00 00 00 2A 00 00 01 F0 00 03");
  const std::string payload =
      kAllHeaders + Hex("FF FF 0A 00 00 00") +
      Param(Ntext("SELECT * FROM t WHERE lsn > @P1 AND name = @P2")) +
      Param(Ntext("@P1 BINARY(10),@P2 NVARCHAR(4000)")) +
      Param(Hex("AD 0A 00 0A 00") + lsn) + Param(Nvarchar("dbo_orders"));
  auto calls = ParseRpcRequest(payload);
  ASSERT_EQ(1u, calls.size());
  const RpcCall& call = calls[0];
  EXPECT_EQ(proc::kExecuteSql, call.proc_id);
  EXPECT_EQ("sp_executesql", call.proc_name);
  ASSERT_EQ(4u, call.params.size());
  EXPECT_EQ("SELECT * FROM t WHERE lsn > @P1 AND name = @P2", call.params[0].value.text);
  EXPECT_EQ("ntext", call.params[0].value.type.name);
  EXPECT_EQ("@P1 BINARY(10),@P2 NVARCHAR(4000)", call.params[1].value.text);
  EXPECT_EQ(ParamValue::Kind::kBinary, call.params[2].value.kind);
  EXPECT_EQ("binary(10)", call.params[2].value.type.ToString());
  EXPECT_EQ(lsn, call.params[2].value.text);
  EXPECT_EQ(ParamValue::Kind::kText, call.params[3].value.kind);
  EXPECT_EQ("nvarchar(4000)", call.params[3].value.type.ToString());
  EXPECT_EQ("dbo_orders", call.params[3].value.text);
}

TEST(Rpc, NamedParametersAndAPlpStatementInChunks) {
  // ODBC Driver 18 style: NVARCHAR(max) statement as PLP in two chunks, named values.
  const std::string part1 = Ucs2("SELECT "), part2 = Ucs2("@P1");
  const std::string plp = Hex("E7 FF FF") + kCollation +
                          Le32(static_cast<std::uint32_t>(part1.size() + part2.size())) + Le32(0) +
                          Le32(static_cast<std::uint32_t>(part1.size())) + part1 +
                          Le32(static_cast<std::uint32_t>(part2.size())) + part2 + Le32(0);
  const std::string payload = kAllHeaders + Hex("FF FF 0A 00 00 00") + Param(plp, "@stmt") +
                              Param(Nvarchar("@P1 int"), "@params") +
                              Param(Hex("26 04 04 2A 00 00 00"), "@P1");
  auto calls = ParseRpcRequest(payload);
  ASSERT_EQ(1u, calls.size());
  ASSERT_EQ(3u, calls[0].params.size());
  EXPECT_EQ("SELECT @P1", calls[0].params[0].value.text);
  EXPECT_EQ("nvarchar(max)", calls[0].params[0].value.type.ToString());
  EXPECT_EQ("@stmt", calls[0].params[0].value.name);
  EXPECT_EQ("@P1", calls[0].params[2].value.name);
  EXPECT_EQ(42, calls[0].params[2].value.int_value);
}

TEST(Rpc, ExecuteByNameAndSeveralCallsInOneMessage) {
  const std::string prepexec = Hex("FF FF 0D 00 00 00") +
                               Param(Hex("26 04 00"), "", 0x01) +  // @handle OUTPUT, NULL
                               Param(Ntext("@P1 INT")) + Param(Ntext("SELECT @P1")) +
                               Param(Hex("26 04 04 07 00 00 00"));
  const std::string execute = Le16(10) + Ucs2("sp_execute") + Hex("00 00") +
                              Param(Hex("26 04 04 01 00 00 00")) +
                              Param(Hex("26 04 04 08 00 00 00"));
  const std::string unprepare = Hex("FF FF 0F 00 00 00") + Param(Hex("26 04 04 01 00 00 00"));
  auto calls = ParseRpcRequest(kAllHeaders + prepexec + Hex("FF") + execute + Hex("FE") +
                               unprepare + Hex("FF"));
  ASSERT_EQ(3u, calls.size());
  EXPECT_EQ(proc::kPrepExec, calls[0].proc_id);
  EXPECT_TRUE(calls[0].params[0].output);
  EXPECT_EQ(ParamValue::Kind::kNull, calls[0].params[0].value.kind);
  EXPECT_FALSE(calls[0].no_exec);
  EXPECT_EQ(proc::kExecute, calls[1].proc_id);
  EXPECT_EQ("sp_execute", calls[1].proc_name);
  EXPECT_TRUE(calls[1].no_exec);
  EXPECT_EQ(8, calls[1].params[1].value.int_value);
  EXPECT_EQ(proc::kUnprepare, calls[2].proc_id);
  EXPECT_FALSE(calls[2].no_exec);
}

TEST(Rpc, QualifiedNamesOfTheSpecialProcedures) {
  const std::string name = "[sys].[sp_prepexec]";
  auto calls = ParseRpcRequest(kAllHeaders + Le16(static_cast<std::uint16_t>(name.size())) +
                               Ucs2(name) + Hex("00 00"));
  ASSERT_EQ(1u, calls.size());
  EXPECT_EQ(proc::kPrepExec, calls[0].proc_id);
}

ParamValue ReadOne(const std::string& type_and_value) {
  WireReader reader(type_and_value, "test");
  ParamValue value;
  ReadParameterValue(reader, &value);
  EXPECT_TRUE(reader.AtEnd()) << "bytes left after the value";
  return value;
}

TEST(Rpc, FixedLengthTypes) {
  ParamValue v = ReadOne(Hex("30 FF"));
  EXPECT_EQ("tinyint", v.type.name);
  EXPECT_EQ(255, v.int_value);
  v = ReadOne(Hex("34 FE FF"));
  EXPECT_EQ("smallint", v.type.name);
  EXPECT_EQ(-2, v.int_value);
  v = ReadOne(Hex("38 FF FF FF 7F"));
  EXPECT_EQ(2147483647, v.int_value);
  v = ReadOne(Hex("7F 00 00 00 00 00 00 00 80"));
  EXPECT_EQ(INT64_MIN, v.int_value);
  v = ReadOne(Hex("32 01"));
  EXPECT_EQ("bit", v.type.name);
  EXPECT_EQ(1, v.int_value);
  v = ReadOne(Hex("3E 00 00 00 00 00 00 F8 3F"));
  EXPECT_EQ(ParamValue::Kind::kFloat, v.kind);
  EXPECT_EQ(1.5, v.float_value);
  v = ReadOne(Hex("3B 00 00 00 C0"));
  EXPECT_EQ("real", v.type.name);
  EXPECT_EQ(-2.0, v.float_value);
  v = ReadOne(Hex("3D 00 00 00 00 01 00 00 00"));
  EXPECT_EQ("datetime", v.type.name);
  EXPECT_EQ(ParamValue::Kind::kOther, v.kind);
  EXPECT_EQ(Hex("00 00 00 00 01 00 00 00"), v.text);
}

TEST(Rpc, NullableTypes) {
  ParamValue v = ReadOne(Hex("26 08 08 FF FF FF FF FF FF FF FF"));
  EXPECT_EQ("bigint", v.type.name);
  EXPECT_EQ(-1, v.int_value);
  v = ReadOne(Hex("26 01 01 C8"));
  EXPECT_EQ(200, v.int_value) << "tinyint is unsigned";
  v = ReadOne(Hex("68 01 00"));
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
  EXPECT_EQ("bit", v.type.name);
  v = ReadOne(Hex("6D 08 08 00 00 00 00 00 00 F8 3F"));
  EXPECT_EQ(1.5, v.float_value);
  v = ReadOne(Hex("6A 09 12 04 09 00 08 E2 01 00 00 00 00 00"));
  EXPECT_EQ("decimal(18,4)", v.type.ToString());
  EXPECT_EQ(ParamValue::Kind::kOther, v.kind);
  EXPECT_EQ(Hex("00 08 E2 01 00 00 00 00 00"), v.text);
  v = ReadOne(Hex("6C 11 26 0A 00"));
  EXPECT_EQ("numeric(38,10)", v.type.ToString());
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
  v = ReadOne(Hex("24 10 10 FF 19 96 6F 86 8B 11 D0 B4 2D 00 C0 4F C9 64 FF"));
  EXPECT_EQ("uniqueidentifier", v.type.name);
  EXPECT_EQ(16u, v.text.size());
  v = ReadOne(Hex("6E 08 08 00 00 00 00 08 E2 01 00"));
  EXPECT_EQ("money", v.type.name);
  v = ReadOne(Hex("6F 04 04 FF FF 9F 05"));
  EXPECT_EQ("smalldatetime", v.type.name);
}

TEST(Rpc, DateAndTimeTypes) {
  ParamValue v = ReadOne(Hex("28 03 46 46 0B"));
  EXPECT_EQ("date", v.type.name);
  EXPECT_EQ(Hex("46 46 0B"), v.text);
  v = ReadOne(Hex("29 03 04 95 2C B3 02"));
  EXPECT_EQ("time(3)", v.type.ToString());
  v = ReadOne(Hex("2A 07 08 07 17 68 B7 19 46 46 0B"));
  EXPECT_EQ("datetime2(7)", v.type.ToString());
  EXPECT_EQ(8u, v.text.size());
  v = ReadOne(Hex("2B 07 00"));
  EXPECT_EQ("datetimeoffset(7)", v.type.ToString());
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
}

TEST(Rpc, CharAndBinaryTypes) {
  ParamValue v = ReadOne(Hex("A7 0A 00") + kCollation + Hex("02 00 41 E9"));
  EXPECT_EQ("varchar(10)", v.type.ToString());
  EXPECT_EQ("A\xC3\xA9", v.text) << "Windows-1252 to UTF-8";
  v = ReadOne(Hex("AF 02 00") + kCollation + Hex("FF FF"));
  EXPECT_EQ("char(2)", v.type.ToString());
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
  v = ReadOne(Hex("EF 04 00") + kCollation + Hex("04 00 3D D8 00 DE"));
  EXPECT_EQ("nchar(2)", v.type.ToString());
  EXPECT_EQ("\xF0\x9F\x98\x80", v.text);
  v = ReadOne(Hex("A5 80 00 03 00 01 02 03"));
  EXPECT_EQ("varbinary(128)", v.type.ToString());
  EXPECT_EQ(Hex("01 02 03"), v.text);
  v = ReadOne(Hex("A5 FF FF FF FF FF FF FF FF FF FF"));
  EXPECT_EQ("varbinary(max)", v.type.ToString());
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
  v = ReadOne(Hex("22 FF FF FF 7F 02 00 00 00 AB CD"));
  EXPECT_EQ("image", v.type.name);
  EXPECT_EQ(Hex("AB CD"), v.text);
  v = ReadOne(Hex("23 FF FF FF 7F") + kCollation + Hex("FF FF FF FF"));
  EXPECT_EQ("text", v.type.name);
  EXPECT_EQ(ParamValue::Kind::kNull, v.kind);
  v = ReadOne(Hex("F1 00 04 00 00 00 00 00 00 00 04 00 00 00 3C 00 61 00 00 00 00 00"));
  EXPECT_EQ("xml", v.type.name);
  EXPECT_EQ("<a", v.text);
}

TEST(Rpc, UnsupportedAndTruncatedParametersAreRejected) {
  const std::string head = kAllHeaders + Hex("FF FF 0A 00 00 00");
  EXPECT_THROW(ParseRpcRequest(head + Param(Hex("62 10 00 00 00"))), SourceError);  // sql_variant
  EXPECT_THROW(ParseRpcRequest(head + Param(Hex("26 04 04 01 00"))), SourceError);
  EXPECT_THROW(ParseRpcRequest(head + Param(Hex("26 03 00"))), SourceError);
  EXPECT_THROW(ParseRpcRequest(kAllHeaders), SourceError);
}

}  // namespace
}  // namespace mssql_cdc::tds
