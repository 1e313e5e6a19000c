// Logins and grants of the simulator (sim_logins, sim_grants), which `mssql-cdc sim serve`
// checks: adding them, refusing bad ones, checking passwords, and files made before
// sim_grants existed.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "sim/access_token.h"
#include "sim/database.h"
#include "sim/sqlite.h"
#include "sim/storage.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::sim {
namespace {

using mssql_cdc::testing::TempDir;

class SimLoginsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = SimDatabase::Create(dir_.File("sim.db"));
    TableDef t;
    t.name = ParseTableName("dbo.orders");
    t.columns = {ParseColumnDeclaration("id int not null")};
    t.primary_key = {"id"};
    db_->CreateTable(t);
    db_->EnableCdc(t.name);
  }

  template <typename F>
  static std::string ConfigErrorOf(F f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no ConfigError";
  }

  TempDir dir_;
  std::unique_ptr<SimDatabase> db_;
};

TEST_F(SimLoginsTest, AuthenticatesOnlyTheRightPassword) {
  db_->AddLogin("cdc_reader", "s3cret!", false);
  db_->AddLogin("Admin", "other", true);
  const auto reader = db_->Authenticate("cdc_reader", "s3cret!");
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->name, "cdc_reader");
  EXPECT_FALSE(reader->is_db_owner);
  // Login names ignore case, as SQL Server's do; passwords do not.
  const auto admin = db_->Authenticate("ADMIN", "other");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->name, "Admin");
  EXPECT_TRUE(admin->is_db_owner);
  EXPECT_FALSE(db_->Authenticate("cdc_reader", "S3cret!"));
  EXPECT_FALSE(db_->Authenticate("cdc_reader", "s3cret"));
  EXPECT_FALSE(db_->Authenticate("cdc_reader", "s3cret!!"));
  EXPECT_FALSE(db_->Authenticate("cdc_reader", ""));
  EXPECT_FALSE(db_->Authenticate("nobody", "s3cret!"));
}

TEST_F(SimLoginsTest, RefusesDuplicateAndMalformedLogins) {
  db_->AddLogin("reader", "pw", false);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddLogin("READER", "pw2", true); }).find("already exists"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddLogin("bad name", "pw", false); }).find("login name"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddLogin("empty", "", false); }).find("password"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddLogin("long", std::string(129, 'x'), false); })
                .find("128"),
            std::string::npos);
  // The refused ones left nothing.
  EXPECT_FALSE(db_->Authenticate("empty", ""));
  EXPECT_TRUE(db_->Authenticate("reader", "pw"));
}

TEST_F(SimLoginsTest, ATokenLoginIsKnownByItsTokenAloneAndKeepsOnlyItsDigest) {
  const std::string token = "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJl";
  db_->AddTokenLogin("app", token, true);
  const auto app = db_->AuthenticateToken(token);
  ASSERT_TRUE(app);
  EXPECT_EQ(app->name, "app");
  EXPECT_TRUE(app->is_db_owner);
  EXPECT_FALSE(db_->AuthenticateToken(token + "x"));
  // It has no password: neither an empty one nor any other logs in by name.
  EXPECT_FALSE(db_->Authenticate("app", ""));
  EXPECT_EQ(AccessTokenDigest(token).size(), 64u);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddTokenLogin("twin", token, false); })
                .find("already belongs to login app"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddTokenLogin("app", "other-token", false); })
                .find("already exists"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddTokenLogin("spaced", "Bearer abc", false); })
                .find("printable ASCII"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->AddTokenLogin("none", "", false); }).find("empty"),
            std::string::npos);
}

TEST(AccessTokenTest, AJsonWebTokenExpiresAtItsExpClaimAndOtherTokensNever) {
  // {"alg":"none"} . {"exp":1700000000,"aud":"x"} . sig, base64url without padding.
  EXPECT_EQ(AccessTokenExpiry("eyJhbGciOiJub25lIn0.eyJleHAiOjE3MDAwMDAwMDAsImF1ZCI6IngifQ.c2ln"),
            1700000000);
  EXPECT_EQ(AccessTokenExpiry("eyJhbGciOiJub25lIn0.eyJhdWQiOiJ4In0.c2ln"), std::nullopt);  // no exp
  EXPECT_EQ(AccessTokenExpiry("opaque-token"), std::nullopt);
  EXPECT_EQ(AccessTokenExpiry("a.b.c.d"), std::nullopt);
  EXPECT_EQ(AccessTokenExpiry("a.!!!.c"), std::nullopt);
}

TEST_F(SimLoginsTest, GrantsNameChangeTablesAndSourceTablesAsTheCatalogSpellsThem) {
  db_->AddLogin("reader", "pw", false);
  EXPECT_EQ(db_->Grant("READER", "CDC.DBO_ORDERS_ct"), "cdc.dbo_orders_CT");
  EXPECT_EQ(db_->Grant("reader", "[dbo].[Orders]"), "dbo.orders");
  EXPECT_EQ(db_->Grant("reader", "dbo.orders"), "dbo.orders");  // again: no change
  EXPECT_TRUE(db_->HasGrant("reader", "cdc.dbo_orders_CT"));
  EXPECT_TRUE(db_->HasGrant("Reader", "CDC.dbo_orders_ct"));
  EXPECT_TRUE(db_->HasGrant("reader", "dbo.orders"));
  EXPECT_FALSE(db_->HasGrant("other", "dbo.orders"));

  EXPECT_NE(ConfigErrorOf([&] { db_->Grant("ghost", "dbo.orders"); }).find("no login named ghost"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->Grant("reader", "cdc.dbo_missing_CT"); })
                .find("cdc.dbo_orders_CT"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->Grant("reader", "dbo.missing"); }).find("no such table"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([&] { db_->Grant("reader", "a.b.c"); }).find("cannot grant"),
            std::string::npos);
}

TEST_F(SimLoginsTest, AFileWithoutTheGrantsTableHasNoGrantsUntilTheFirst) {
  db_->AddLogin("reader", "pw", false);
  db_->sqlite().Exec("DROP TABLE sim_grants");
  EXPECT_FALSE(db_->HasGrant("reader", "dbo.orders"));
  {
    SqliteDb readonly(db_->path(), SqliteDb::Mode::kReadOnly);
    Catalog catalog(readonly);
    EXPECT_FALSE(catalog.HasGrant("reader", "dbo.orders"));
  }
  db_->Grant("reader", "dbo.orders");
  EXPECT_TRUE(db_->HasGrant("reader", "dbo.orders"));
}

TEST(SimGrantsSchemaTest, TheCatalogSchemaCreatesTheGrantsTableAsTheOnDemandStatementDoes) {
  EXPECT_NE(kCatalogSchema.find(kGrantsSchema), std::string_view::npos);
  EXPECT_NE(kCatalogSchema.find(kLoginTokensSchema), std::string_view::npos);
}

}  // namespace
}  // namespace mssql_cdc::sim
