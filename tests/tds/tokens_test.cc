#include "tds/tokens.h"

#include <gtest/gtest.h>

#include "tds/packet.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::Hex;

// MS-TDS 4.4 "Login Response", payload after the packet header (a TDS 7.2 server).
constexpr const char* kSpecLoginResponse = R"(
  E3 1B 00 01 06 6D 00 61 00 73 00 74 00 65 00 72 00 06 6D 00 61 00 73 00 74 00 65 00 72 00
  AB 58 00 45 16 00 00 02 00 25 00 43 00 68 00 61 00 6E 00 67 00 65 00 64 00 20
  00 64 00 61 00 74 00 61 00 62 00 61 00 73 00 65 00 20 00 63 00 6F 00 6E 00 74 00 65 00 78 00 74
  00 20 00 74 00 6F 00 20 00 27 00 6D 00 61 00 73 00 74 00 65 00 72 00 27 00 2E 00 00 00 00 00 00
  00 E3 08 00 07 05 09 04 D0 00 34 00 E3 17 00 02
  0A 75 00 73 00 5F 00 65 00 6E 00 67 00 6C 00 69 00 73 00 68 00 00 E3 13 00 04 04 34 00 30 00 39
  00 36 00 04 34 00 30 00 39 00 36 00 AB 5C 00 47
  16 00 00 01 00 27 00 43 00 68 00 61 00 6E 00 67 00 65 00 64 00 20 00 6C 00 61 00 6E 00 67 00 75
  00 61 00 67 00 65 00 20 00 73 00 65 00 74 00 74 00 69 00 6E 00 67 00 20 00 74 00 6F 00 20 00 75
  00 73 00 5F 00 65 00 6E 00 67 00 6C 00 69 00 73 00 68 00 2E 00 00 00 00 00 00 00 AD 36 00 01 72
  09 00 02 16 4D 00 69 00 63 00 72 00 6F 00 73 00 6F 00 66 00 74 00 20 00 53 00 51 00 4C 00 20 00
  53 00 65 00 72 00 76 00 65 00 72 00 00 00 00 00 00 00 00 00 FD 00 00 00 00 00 00 00 00 00 00 00
  00)";

TEST(Tokens, TheSpecLoginResponseIsRebuiltByteForByte) {
  WireBuffer out;
  WriteEnvChangeText(out, EnvChange::kDatabase, "master", "master");
  MessageToken info;
  info.number = 5701;
  info.state = 2;
  info.text = "Changed database context to 'master'.";
  WriteInfo(out, info);
  WriteEnvChangeBytes(out, EnvChange::kCollation, kServerCollation, "");
  WriteEnvChangeText(out, EnvChange::kLanguage, "us_english", "");
  WriteEnvChangeText(out, EnvChange::kPacketSize, "4096", "4096");
  info.number = 5703;
  info.state = 1;
  info.text = "Changed language setting to us_english.";
  WriteInfo(out, info);
  // The example's program name has two trailing NUL characters.
  WriteLoginAck(out, kTds72, std::string_view("Microsoft SQL Server\0\0", 22), 0, 0, 0);
  WriteDone(out, DoneToken{token::kDone, done::kFinal, 0, 0});
  EXPECT_BYTES(kSpecLoginResponse, out.view());
}

TEST(Tokens, LoginAckLengthCoversExactlyItsBody) {
  WireBuffer out;
  WriteLoginAck(out, kTds74, "Microsoft SQL Server", 16, 0, 1000);
  // 1 interface + 4 version + 1 + 2*20 name + 4 program version = 50 = 0x32.
  EXPECT_BYTES("AD 32 00 01 74 00 00 04 14", out.view().substr(0, 9));
  EXPECT_BYTES("10 00 03 E8", out.view().substr(out.size() - 4));
  EXPECT_EQ(3u + 0x32u, out.size());
}

TEST(Tokens, ErrorCarriesServerNameEmptyProcedureAndLineOne) {
  WireBuffer out;
  MessageToken error;
  error.number = 313;
  error.state = 3;
  error.severity = 16;
  error.text = "ab";
  error.server_name = "sim";
  error.line = 1;
  WriteError(out, error);
  EXPECT_BYTES(
      "AA 18 00 39 01 00 00 03 10 02 00 61 00 62 00 03 73 00 69 00 6D 00 00 01 00 00 00",
      out.view());
}

TEST(Tokens, DoneVariantsHaveEightByteRowCounts) {
  WireBuffer out;
  WriteDone(out, DoneToken{token::kDoneInProc, done::kCount | done::kMore, 0xC1, 1});
  WriteReturnStatus(out, 0);
  WriteDone(out, DoneToken{token::kDoneProc, done::kFinal, 0xE0, 0});
  // MS-TDS 4.9 "RPC Server Response".
  EXPECT_BYTES(
      "FF 11 00 C1 00 01 00 00 00 00 00 00 00 79 00 00 00 00 FE 00 00 E0 00 00 00 00 00 00 00 "
      "00 00",
      out.view());
}

TEST(Tokens, ReturnValueOfAHandle) {
  WireBuffer out;
  WriteReturnValueInt(out, 0, "@h", 7);
  EXPECT_BYTES("AC 00 00 02 40 00 68 00 01 00 00 00 00 01 00 26 04 04 07 00 00 00", out.view());
}

TEST(Tokens, TransactionDescriptorsAreByteValues) {
  WireBuffer out;
  WriteEnvChangeBytes(out, EnvChange::kBeginTransaction, Hex("01 00 00 00 00 00 00 00"), "");
  WriteEnvChangeBytes(out, EnvChange::kCommitTransaction, "", Hex("01 00 00 00 00 00 00 00"));
  EXPECT_BYTES(
      "E3 0B 00 08 08 01 00 00 00 00 00 00 00 00 "
      "E3 0B 00 09 00 08 01 00 00 00 00 00 00 00",
      out.view());
}

}  // namespace
}  // namespace mssql_cdc::tds
