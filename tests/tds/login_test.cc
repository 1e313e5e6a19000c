// PRELOGIN and LOGIN7 parsing against the MS-TDS examples and hand-built messages.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "tds/login7.h"
#include "tds/prelogin.h"
#include "tests/tds/login_builder.h"
#include "tests/tds/tds_test_util.h"

namespace mssql_cdc::tds {
namespace {

using testing::Hex;
using testing::Le16;
using testing::Le32;
using testing::Ucs2;
using testing::BuildLogin;
using testing::BuildPrelogin;
using testing::FedAuthFeature;

TEST(Prelogin, TheSpecRequestAsksForEncryptionAndMars) {
  // MS-TDS 4.1 "Pre-Login Request", payload after the packet header.
  const std::string payload = Hex(
      "00 00 1A 00 06 01 00 20 00 01 02 00 21 00 01 03 00 22 00 04 04 00 26 00 "
      "01 FF 09 00 00 00 00 00 01 00 B8 0D 00 00 01");
  PreloginRequest request = ParsePrelogin(payload);
  EXPECT_EQ(9, request.version[0]);
  EXPECT_EQ(Encryption::kOn, request.encryption);
  EXPECT_TRUE(request.mars);
}

TEST(Prelogin, FreeTdsWithEncryptionOffSaysItCannotEncrypt) {
  // VERSION, ENCRYPTION = NOT_SUP, INSTOPT "MSSQLServer", THREADID, MARS off.
  std::string payload = Hex(
      "00 00 1A 00 06 01 00 20 00 01 02 00 21 00 0C 03 00 2D 00 04 04 00 31 00 01 FF "
      "09 00 00 00 00 00 02");
  payload += std::string("MSSQLServer\0", 12);
  payload += Hex("39 30 00 00 00");
  PreloginRequest request = ParsePrelogin(payload);
  EXPECT_EQ(Encryption::kNotSupported, request.encryption);
  EXPECT_FALSE(request.mars);
}

TEST(Prelogin, TheReplyCarriesTheEncryptionDecided) {
  EXPECT_BYTES(
      "00 00 1A 00 06 01 00 20 00 01 02 00 21 00 01 03 00 22 00 00 04 00 22 00 01 FF "
      "10 00 03 E8 00 00 02 00 00",
      BuildPreloginReply(Encryption::kNotSupported));
  EXPECT_EQ('\x03', BuildPreloginReply(Encryption::kRequired)[32]);
}

// MS-TDS 2.2.6.5's table: the client's value against the server's setting.
TEST(Prelogin, EncryptionIsDecidedByTheTableOfTheSpec) {
  using Outcome = EncryptionDecision::Outcome;
  struct Row {
    Encryption client;
    EncryptionSetting server;
    Encryption reply;
    Outcome outcome;
  };
  const Row rows[] = {
      {Encryption::kOff, EncryptionSetting::kAvailable, Encryption::kOff, Outcome::kLoginOnly},
      {Encryption::kOff, EncryptionSetting::kForced, Encryption::kRequired, Outcome::kEverything},
      {Encryption::kOff, EncryptionSetting::kUnavailable, Encryption::kNotSupported,
       Outcome::kPlaintext},
      {Encryption::kOn, EncryptionSetting::kAvailable, Encryption::kOn, Outcome::kEverything},
      {Encryption::kOn, EncryptionSetting::kForced, Encryption::kOn, Outcome::kEverything},
      {Encryption::kOn, EncryptionSetting::kUnavailable, Encryption::kNotSupported,
       Outcome::kRefuse},
      {Encryption::kRequired, EncryptionSetting::kAvailable, Encryption::kOn,
       Outcome::kEverything},
      {Encryption::kNotSupported, EncryptionSetting::kAvailable, Encryption::kNotSupported,
       Outcome::kPlaintext},
      {Encryption::kNotSupported, EncryptionSetting::kForced, Encryption::kRequired,
       Outcome::kRefuse},
      {Encryption::kNotSupported, EncryptionSetting::kUnavailable, Encryption::kNotSupported,
       Outcome::kPlaintext},
  };
  for (const Row& row : rows) {
    const EncryptionDecision decision = DecideEncryption(row.client, row.server);
    EXPECT_EQ(row.reply, decision.reply) << static_cast<int>(row.client) << " "
                                         << static_cast<int>(row.server);
    EXPECT_EQ(row.outcome, decision.outcome) << static_cast<int>(row.client) << " "
                                             << static_cast<int>(row.server);
  }
}

TEST(Prelogin, OptionDataOutsideTheMessageIsRejected) {
  EXPECT_THROW(ParsePrelogin(Hex("00 00 1A 00 06 FF")), SourceError);
  EXPECT_THROW(ParsePrelogin(Hex("00 00")), SourceError);
}

TEST(Login7, TheSpecLoginRequest) {
  // MS-TDS 4.2 "Login Request", payload after the packet header.
  const std::string payload = Hex(
      "88 00 00 00 02 00 09 72 00 10 00 00 00 00 00 07 00 01 00 00 00 00 00 00 "
      "E0 03 00 00 00 00 00 00 09 04 00 00 5E 00 08 00 6E 00 02 00 72 00 00 00 72 00 07 00 "
      "80 00 00 00 80 00 00 00 80 00 04 00 88 00 00 00 88 00 00 00 00 50 8B E2 B7 8F "
      "88 00 00 00 88 00 00 00 88 00 00 00 00 00 00 00 "
      "73 00 6B 00 6F 00 73 00 74 00 6F 00 76 00 31 00 73 00 61 00 4F 00 53 00 51 00 "
      "4C 00 2D 00 33 00 32 00 4F 00 44 00 42 00 43 00");
  Login7Request login = ParseLogin7(payload);
  EXPECT_EQ(0x72090002u, login.tds_version);
  EXPECT_EQ(4096u, login.packet_size);
  EXPECT_EQ("skostov1", login.host_name);
  EXPECT_EQ("sa", login.user_name);
  EXPECT_EQ("", login.password);
  EXPECT_EQ("OSQL-32", login.app_name);
  EXPECT_EQ("ODBC", login.library_name);
  EXPECT_EQ("", login.database);
  EXPECT_FALSE(login.integrated_security);
}

TEST(Login7, PasswordBytesAreUnscrambled) {
  // "a" is 61 00 in UCS-2; nibbles swapped (16 00) and XOR A5: B3 A5.
  EXPECT_EQ("a", DecodePassword(Hex("B3 A5")));
  EXPECT_EQ("", DecodePassword(""));
}

TEST(Login7, AHandBuiltLoginWithANonAsciiPassword) {
  // "Secr3t!é" in UCS-2.
  const std::string password = Ucs2("Secr3t!") + Hex("E9 00");
  Login7Request login = ParseLogin7(BuildLogin("cdc_reader", password, "sim", 8192));
  EXPECT_EQ(0x74000004u, login.tds_version);
  EXPECT_EQ(8192u, login.packet_size);
  EXPECT_EQ(1234u, login.client_pid);
  EXPECT_EQ("cdc_reader", login.user_name);
  EXPECT_EQ("Secr3t!\xC3\xA9", login.password);
  EXPECT_EQ("sim", login.database);
  EXPECT_EQ("us_english", login.language);
  EXPECT_EQ("DB-Library", login.library_name);
  EXPECT_EQ("127.0.0.1", login.server_name);
}

TEST(Prelogin, FedAuthRequiredIsReadAndAnsweredWhenAsked) {
  // A client's PRELOGIN with FEDAUTHREQUIRED=1 after ENCRYPTION.
  const std::string asks = Hex("00 00 10 00 06 01 00 16 00 01 06 00 17 00 01 FF 00 00 00 00 00 00 01 01");
  EXPECT_TRUE(ParsePrelogin(asks).fed_auth_required);
  EXPECT_FALSE(ParsePrelogin(BuildPrelogin(0x00)).fed_auth_required);
  EXPECT_TRUE(ParsePrelogin(BuildPreloginReply(Encryption::kOn, true)).fed_auth_required);
  EXPECT_FALSE(ParsePrelogin(BuildPreloginReply(Encryption::kOn)).fed_auth_required);
}

TEST(Login7, AnAccessTokenArrivesInTheFedAuthFeature) {
  const std::string token = "eyJ0eXAiOiJKV1QifQ.eyJleHAiOjF9.c2ln";
  Login7Request login =
      ParseLogin7(BuildLogin("", "", "sim", 4096, 0x74000004, FedAuthFeature(token, true)));
  ASSERT_TRUE(login.federated_authentication.has_value());
  EXPECT_EQ(FederatedAuthentication::kSecurityToken, login.federated_authentication->library);
  EXPECT_TRUE(login.federated_authentication->echo);
  EXPECT_EQ(token, login.federated_authentication->token);
  EXPECT_EQ("", login.user_name);
  EXPECT_EQ("sim", login.database);

  const Login7Request msal =
      ParseLogin7(BuildLogin("", "", "", 4096, 0x74000004, FedAuthFeature("", false, 0x02)));
  ASSERT_TRUE(msal.federated_authentication.has_value());
  EXPECT_EQ(0x02, msal.federated_authentication->library);
  EXPECT_FALSE(msal.federated_authentication->echo);
  // FreeTDS's OptionFlags3 says fExtension with an empty extension field: no features.
  EXPECT_FALSE(ParseLogin7(BuildLogin("u", Ucs2("p"), "", 4096)).federated_authentication);
}

TEST(Login7, AFeatureListRunningPastTheMessageIsRejected) {
  std::string login = BuildLogin("", "", "", 4096, 0x74000004, FedAuthFeature("tok", true));
  EXPECT_THROW(ParseLogin7(login.substr(0, login.size() - 3)), SourceError);
}

TEST(Login7, TruncatedOrLyingMessagesAreRejected) {
  std::string login = BuildLogin("u", Ucs2("p"), "db", 4096);
  EXPECT_THROW(ParseLogin7(login.substr(0, 60)), SourceError);
  // Make the host name run past the end of the message.
  login[38] = static_cast<char>(0xF0);
  login[39] = 0x7F;
  EXPECT_THROW(ParseLogin7(login), SourceError);
}

}  // namespace
}  // namespace mssql_cdc::tds
