// Connection strings of the odbc backend: parsing, the driver choice, the FreeTDS dialect,
// the login appended from options, and that no message ever shows the password.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "source/odbc/bundled_driver.h"
#include "source/odbc/connection_string.h"
#include "source/odbc/driver_connection.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::odbc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kOnlyFreeTds = {"FreeTDS"};
const std::vector<std::string> kBoth = {"FreeTDS", "ODBC Driver 18 for SQL Server"};

std::string ConfigMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

TEST(ConnectionStringTest, ParsesPairsBracesAndEscapes) {
  const auto cs = ConnectionString::Parse(
      " Server = host,1433 ;Database={a;b};PWD={x}}y{z};;Encrypt=no; ");
  ASSERT_EQ(cs.keywords().size(), 4u);
  EXPECT_EQ(cs.Get("server"), "host,1433");
  EXPECT_EQ(cs.Get("DATABASE"), "a;b");
  EXPECT_EQ(cs.Get("pwd"), "x}y{z");
  EXPECT_EQ(cs.Get("Encrypt"), "no");
  EXPECT_EQ(cs.keywords()[0].name, "Server");  // spelling kept
  EXPECT_FALSE(cs.Get("UID"));
}

TEST(ConnectionStringTest, WritesBracesOnlyWhereNeeded) {
  auto cs = ConnectionString::Parse("Server=h;Database={a;b}");
  cs.Set("UID", "plain");
  cs.Set("PWD", "p}w;d");
  EXPECT_EQ(cs.ToString(), "Server=h;Database={a;b};UID={plain};PWD={p}}w;d};");
  // What it writes reads back the same.
  const auto again = ConnectionString::Parse(cs.ToString());
  EXPECT_EQ(again.Get("PWD"), "p}w;d");
  EXPECT_EQ(again.Get("Database"), "a;b");
}

TEST(ConnectionStringTest, MalformedStringsNameTheKeywordNeverTheValue) {
  const std::string unclosed = ConfigMessage([] { ConnectionString::Parse("Server=h;PWD={s3cret"); });
  EXPECT_THAT(unclosed, HasSubstr("'PWD'"));
  EXPECT_THAT(unclosed, Not(HasSubstr("s3cret")));
  EXPECT_THAT(ConfigMessage([] { ConnectionString::Parse("Server=h;hunter2secret"); }),
              AllOf(HasSubstr("part 2 has no '='"), Not(HasSubstr("hunter2"))));
  EXPECT_THAT(ConfigMessage([] { ConnectionString::Parse("Server=a;server=b"); }),
              HasSubstr("twice"));
  EXPECT_THAT(ConfigMessage([] { ConnectionString::Parse("PWD={abc}def;Server=x"); }),
              AllOf(HasSubstr("'PWD'"), Not(HasSubstr("abc"))));
  EXPECT_THAT(ConfigMessage([] { ConnectionString::Parse("=v"); }), HasSubstr("empty keyword"));
}

TEST(DriverConnectionTest, KnowsWhenTheConnectionRequiresEncryptionAndWhere) {
  const std::vector<std::string> both = {"FreeTDS", "ODBC Driver 18 for SQL Server"};
  struct Case {
    const char* text;
    bool required;
    const char* host;
    int port;
  };
  for (const Case& c : {Case{"Driver={FreeTDS};Server=h,1500;Encrypt=yes", true, "h", 1500},
                        Case{"Server=tcp:h;Encrypt=Strict", true, "h", 1433},
                        Case{"Driver={FreeTDS};Server=h,1500;Encrypt=no", false, "h", 1500},
                        Case{"Driver={FreeTDS};Server=h,1500", false, "h", 1500},
                        Case{"Server=h,1500", true, "h", 1500},  // Driver 18's default
                        Case{"Server=h,1500;Encrypt=optional", false, "h", 1500},
                        Case{"Driver={FreeTDS};Server=h\\prod;Encryption=require", true, "", 0}}) {
    const DriverConnection d = BuildDriverConnection(c.text, std::nullopt, std::nullopt, both);
    EXPECT_EQ(d.requires_encryption, c.required) << c.text;
    EXPECT_EQ(d.host, c.host) << c.text;
    EXPECT_EQ(d.port, c.port) << c.text;
  }
}

TEST(DriverConnectionTest, StrictThroughFreeTdsIsRefusedNotWeakened) {
  EXPECT_THAT(ConfigMessage([] {
                BuildDriverConnection("Driver={FreeTDS};Server=h,1500;Encrypt=strict",
                                      std::nullopt, std::nullopt, kBoth);
              }),
              AllOf(HasSubstr("Encrypt=strict"), HasSubstr("needs ODBC Driver 18")));
}

TEST(DriverConnectionTest, MissingServerIsAConfigError) {
  EXPECT_THAT(ConfigMessage([] {
                BuildDriverConnection("Database=sales;Encrypt=no", std::nullopt, std::nullopt,
                                      kOnlyFreeTds);
              }),
              HasSubstr("connectionString has no Server keyword: add Server=host,port"));
  // Address, Addr and DSN name a server too.
  EXPECT_NO_THROW(BuildDriverConnection("Addr=h", std::nullopt, std::nullopt, kOnlyFreeTds));
  EXPECT_NO_THROW(BuildDriverConnection("Address=h", std::nullopt, std::nullopt, kOnlyFreeTds));
  EXPECT_NO_THROW(BuildDriverConnection("DSN=prod", std::nullopt, std::nullopt, kOnlyFreeTds));
}

TEST(DriverConnectionTest, PrefersMicrosoftDriver18AndLeavesItsDialectAlone) {
  const auto c = BuildDriverConnection("Server=tcp:db.example.com,1433;Database=sales;Encrypt=yes",
                                       std::string("reader"), std::string("pw"), kBoth);
  EXPECT_EQ(c.driver, "ODBC Driver 18 for SQL Server");
  EXPECT_FALSE(c.freetds);
  EXPECT_EQ(c.text,
            "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db.example.com,1433;"
            "Database=sales;Encrypt=yes;UID={reader};PWD={pw};");
  EXPECT_EQ(c.server, "db.example.com,1433");
  EXPECT_EQ(c.login, "reader");
}

TEST(DriverConnectionTest, FallsBackToFreeTdsAndTranslates) {
  const auto c = BuildDriverConnection("Server=localhost,14330;Database=cdc;Encrypt=no;"
                                       "TrustServerCertificate=yes",
                                       std::nullopt, std::nullopt, kOnlyFreeTds);
  EXPECT_EQ(c.driver, "FreeTDS");
  EXPECT_TRUE(c.freetds);
  EXPECT_EQ(c.text,
            "Driver={FreeTDS};Server=localhost;Database=cdc;Port=14330;TDS_Version=7.4;"
            "Encryption=off;ClientCharset=UTF-8;PacketSize=32767;");
}

TEST(DriverConnectionTest, FreeTdsKeepsWhatTheUserSetInItsOwnTerms) {
  const auto c = BuildDriverConnection(
      "Driver={FreeTDS};Server=h,1;Port=2;TDS_Version=7.3;Encrypt=yes;ClientCharset=CP1252",
      std::nullopt, std::nullopt, {});
  EXPECT_TRUE(c.freetds);
  const auto cs = ConnectionString::Parse(c.text);
  EXPECT_EQ(cs.Get("Server"), "h");
  EXPECT_EQ(cs.Get("Port"), "2");  // an explicit Port wins over the one after the comma
  EXPECT_EQ(cs.Get("TDS_Version"), "7.3");
  EXPECT_EQ(cs.Get("Encryption"), "require");
  EXPECT_FALSE(cs.Has("Encrypt"));
  EXPECT_EQ(cs.Get("ClientCharset"), "CP1252");
}

TEST(DriverConnectionTest, ADriverKeywordWinsEvenWhenNotInstalled) {
  const auto c = BuildDriverConnection("Driver={ODBC Driver 17 for SQL Server};Server=h",
                                       std::nullopt, std::nullopt, kBoth);
  EXPECT_EQ(c.driver, "ODBC Driver 17 for SQL Server");
  EXPECT_FALSE(c.freetds);
  const auto path = BuildDriverConnection("Driver=/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so;Server=h,5",
                                          std::nullopt, std::nullopt, {});
  EXPECT_TRUE(path.freetds);
  EXPECT_EQ(ConnectionString::Parse(path.text).Get("Port"), "5");
}

TEST(DriverConnectionTest, NoDriverInstalledSaysWhatToInstall) {
  EXPECT_THAT(ConfigMessage([] {
                BuildDriverConnection("Server=h", std::nullopt, std::nullopt, {"PostgreSQL"});
              }),
              AllOf(HasSubstr("no SQL Server ODBC driver"), HasSubstr("PostgreSQL"),
                    HasSubstr("Driver={")));
}

TEST(DriverConnectionTest, EscapesTheLoginAndKeepsThePasswordSecret) {
  const auto c = BuildDriverConnection("Server=h", std::string("we}ird;user"),
                                       std::string("p}a;ss{word"), kBoth);
  EXPECT_THAT(c.text, HasSubstr("UID={we}}ird;user};PWD={p}}a;ss{word};"));
  const auto cs = ConnectionString::Parse(c.text);
  EXPECT_EQ(cs.Get("UID"), "we}ird;user");
  EXPECT_EQ(cs.Get("PWD"), "p}a;ss{word");
  EXPECT_EQ(c.secrets, std::vector<std::string>{"p}a;ss{word"});
  EXPECT_THAT(c.server, Not(HasSubstr("p}a")));
}

TEST(DriverConnectionTest, BracesTheLoginTheWayFreeTdsReadsThem) {
  // FreeTDS 1.3 ends a braced value at the '}' before ';' and does not undo '}}'.
  const auto c = BuildDriverConnection("Server=h", std::string("user"),
                                       std::string("p}a;ss{word}"), kOnlyFreeTds);
  EXPECT_THAT(c.text, HasSubstr("UID={user};PWD={p}a;ss{word}};"));
  const std::string refused = ConfigMessage([] {
    BuildDriverConnection("Server=h", std::string("user"), std::string("ab};cd-secret"), kOnlyFreeTds);
  });
  EXPECT_THAT(refused, AllOf(HasSubstr("'PWD'"), HasSubstr("'};'"), Not(HasSubstr("cd-secret"))));
}

TEST(DriverConnectionTest, LoginGivenTwiceOrPasswordAloneIsRefusedWithoutValues) {
  const std::string twice = ConfigMessage([] {
    BuildDriverConnection("Server=h;UID=a;PWD=topsecret1", std::string("b"), std::string("topsecret2"),
                          kOnlyFreeTds);
  });
  EXPECT_THAT(twice, HasSubstr("login is given twice"));
  EXPECT_THAT(twice, Not(HasSubstr("topsecret")));
  EXPECT_THAT(ConfigMessage([] {
                BuildDriverConnection("Server=h", std::nullopt, std::string("topsecret3"),
                                      kOnlyFreeTds);
              }),
              AllOf(HasSubstr("without option user"), Not(HasSubstr("topsecret"))));
  // A login inside the string is kept and its password still counts as a secret.
  const auto inside = BuildDriverConnection("Server=h;UID=a;PWD=topsecret4", std::nullopt,
                                            std::nullopt, kOnlyFreeTds);
  EXPECT_EQ(inside.login, "a");
  EXPECT_EQ(inside.secrets, std::vector<std::string>{"topsecret4"});
}

TEST(DriverConnectionTest, AnAccessTokenStaysOutOfTheStringAndIsASecret) {
  const std::string token = "eyJhbGciOi.eyJleHAiOjF9.c2lnbmF0dXJl";
  const auto c = BuildDriverConnection("Server=h,1433;Database=sales;Encrypt=yes", std::nullopt,
                                       std::nullopt, kBoth, token);
  EXPECT_EQ(c.access_token, token);
  EXPECT_THAT(c.text, Not(HasSubstr("eyJ")));
  EXPECT_EQ(c.secrets, std::vector<std::string>{token});
  EXPECT_EQ(c.login, "");
}

TEST(DriverConnectionTest, AnAccessTokenBesideAnotherLoginOrThroughFreeTdsIsRefused) {
  const std::string token = "tok-secret-123";
  for (const char* cs : {"Server=h;UID=a", "Server=h;PWD=b", "Server=h;Authentication=ActiveDirectoryMsi",
                         "Server=h;Trusted_Connection=yes"}) {
    const std::string message =
        ConfigMessage([&] { BuildDriverConnection(cs, std::nullopt, std::nullopt, kBoth, token); });
    EXPECT_THAT(message, AllOf(HasSubstr("accessToken option is set"), Not(HasSubstr("tok-secret"))))
        << cs;
  }
  EXPECT_THAT(ConfigMessage([&] {
                BuildDriverConnection("Server=h", std::nullopt, std::nullopt, kOnlyFreeTds, token);
              }),
              AllOf(HasSubstr("needs ODBC Driver 18"), Not(HasSubstr("tok-secret"))));
}

TEST(DriverConnectionTest, ADriver18LibraryAmongTheDriversIsChosenBeforeFreeTds) {
  const std::string library = "/venv/mssql_python_odbc/libs/linux/rhel/x86_64/lib/libmsodbcsql-18.6.so.2.1";
  const auto c = BuildDriverConnection("Server=h,1433", std::nullopt, std::nullopt,
                                       {"FreeTDS", library});
  EXPECT_EQ(c.driver, library);
  EXPECT_FALSE(c.freetds);
  EXPECT_TRUE(c.requires_encryption);  // Driver 18's default, by path as by name
  EXPECT_EQ(BuildDriverConnection("Server=h", std::nullopt, std::nullopt,
                                  {library, "ODBC Driver 18 for SQL Server"})
                .driver,
            "ODBC Driver 18 for SQL Server");
  EXPECT_THAT(ConfigMessage([] { BuildDriverConnection("Server=h", std::nullopt, std::nullopt, {}); }),
              HasSubstr("pip install mssql-python-odbc"));
}

TEST(BundledDriverTest, TheLinuxFamilyComesFromIdOrIdLike) {
  EXPECT_EQ(DriverFamily("PRETTY_NAME=\"Debian GNU/Linux 12\"\nID=debian\n"), "debian_ubuntu");
  EXPECT_EQ(DriverFamily("ID=ubuntu\nID_LIKE=debian\n"), "debian_ubuntu");
  EXPECT_EQ(DriverFamily("ID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\n"), "rhel");
  EXPECT_EQ(DriverFamily("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"), "rhel");
  EXPECT_EQ(DriverFamily("ID=\"sles\"\nID_LIKE=\"suse\"\n"), "suse");
  EXPECT_EQ(DriverFamily("ID=alpine\n"), std::nullopt);
  EXPECT_EQ(DriverFamily(""), std::nullopt);
}

TEST(BundledDriverTest, FindsTheLibraryOfTheFamilyAndMachine) {
  mssql_cdc::testing::TempDir dir;
  const auto lib = std::filesystem::path(dir.path()) / "linux/rhel/x86_64/lib";
  std::filesystem::create_directories(lib);
  std::ofstream(lib / "libodbcinst.so.2") << "x";
  std::ofstream(lib / "libmsodbcsql-18.6.so.2.1") << "x";
  EXPECT_EQ(FindDriver18(dir.path(), "rhel", "x86_64"), (lib / "libmsodbcsql-18.6.so.2.1").string());
  EXPECT_EQ(FindDriver18(dir.path(), "suse", "x86_64"), std::nullopt);
  EXPECT_EQ(FindDriver18(dir.path(), "rhel", "aarch64"), std::nullopt);
}

}  // namespace
}  // namespace mssql_cdc::odbc
