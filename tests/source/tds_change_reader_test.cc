// The engine's TDS change reader against a real `sim serve` on a local port: what it does when
// a result column is not one it decodes (hands the read to its fallback before delivering a
// row, or fails naming the way out), and that its connection is kept between reads.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/time.h"
#include "read_helpers.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "core/arrow_status.h"
#include "source/odbc/tds_change_reader.h"
#include "source/sim/sim_source.h"
#include "tests/testing/served_sim.h"
#include "tests/testing/temp_dir.h"
#include "tls/client_context.h"

namespace mssql_cdc::odbc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using mssql_cdc::testing::Drain;

const sim::TableName kItems = sim::ParseTableName("dbo.items");

class TdsChangeReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("cdc.db");
    {
      sim::CreateOptions options;
      options.clock = sim::ClockMode::kManual;
      options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 10:00:00")};
      auto db = sim::SimDatabase::Create(path_, options);
      sim::TableDef items;
      items.name = kItems;
      for (const char* c : {"id int not null", "qty int", "note nvarchar(20)"}) {
        items.columns.push_back(sim::ParseColumnDeclaration(c));
      }
      items.primary_key = {"id"};
      db->CreateTable(items);
      instance_ = db->EnableCdc(kItems);
      for (int commit = 0; commit < 3; ++commit) {
        db->AdvanceClock(1'000'000);
        auto txn = db->Begin();
        for (int i = 0; i < 4; ++i) {
          const int id = commit * 4 + i;
          txn->Insert(kItems, {{"id", id}, {"qty", id * 10}, {"note", "n" + std::to_string(id)}});
        }
        txn->Commit();
      }
    }
    served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_);
    sim_ = OpenSimSource(path_);
    settings_ = std::make_shared<TdsReaderSettings>();
    settings_->login.host = "127.0.0.1";
    settings_->login.port = served_->port();
    settings_->login.user = mssql_cdc::testing::ServedSim::kUser;
    settings_->login.password = mssql_cdc::testing::ServedSim::kPassword;
    settings_->login.database = sim::SimDatabase::Open(path_)->database_name();
    settings_->slot = std::make_shared<TdsConnectionSlot>();
  }

  ChangeReadRequest Request() const {
    ChangeReadRequest request;
    request.capture_instance = instance_;
    request.from = sim_->MinLsn(instance_);
    request.to = *sim_->MaxLsn();
    request.batch_rows = 5;
    return request;
  }

  // The plan the odbc backend would make, with the captured columns as the server has them.
  ChangeReadPlan Plan() const {
    const ChangeReadRequest request = Request();
    ChangeReadPlan plan;
    plan.capture_instance = instance_;
    plan.columns = sim_->CapturedColumns(instance_);
    plan.from = request.from;
    plan.to = request.to;
    plan.batch_rows = request.batch_rows;
    return plan;
  }

  mssql_cdc::testing::TempDir dir_;
  std::string path_;
  std::string instance_;
  std::unique_ptr<mssql_cdc::testing::ServedSim> served_;
  std::unique_ptr<Source> sim_;
  std::shared_ptr<TdsReaderSettings> settings_;
};

TEST_F(TdsChangeReaderTest, ReadsTheSimBackendsBatchesAndKeepsItsConnection) {
  const SourceClock clock = SourceClock::Utc();
  const auto expected = Drain(*sim_->ReadChanges(Request(), clock));
  for (int read = 0; read < 3; ++read) {
    const auto actual = Drain(*MakeTdsChangeReader(settings_, Plan(), clock, TdsFallback{}));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t b = 0; b < expected.size(); ++b) {
      EXPECT_TRUE(actual[b]->Equals(*expected[b])) << actual[b]->ToString();
    }
  }
  EXPECT_EQ(served_->logins(), 1);  // three reads, one login: the slot keeps the connection
}

// Over TLS as Driver 18 would connect (decision 0020): encrypted throughout with the
// certificate checked, TLS first (strict), and the login alone encrypted (Encrypt=no). The
// batches are the sim backend's, with no fallback to take over.
TEST_F(TdsChangeReaderTest, ReadsOverEachKindOfEncryptionWithoutTheDriver) {
  using Encrypt = tds::ClientLogin::Encrypt;
  using Check = tls::CertificateRules::Check;
  served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_, /*tls=*/true);
  mssql_cdc::testing::TestServerCertificates();  // SSL_CERT_FILE names the test CA
  settings_->login.host = "localhost";
  settings_->login.port = served_->port();
  const SourceClock clock = SourceClock::Utc();
  const auto expected = Drain(*sim_->ReadChanges(Request(), clock));
  for (const Encrypt encrypt : {Encrypt::kYes, Encrypt::kStrict, Encrypt::kNo}) {
    settings_->slot = std::make_shared<TdsConnectionSlot>();
    settings_->login.encrypt = encrypt;
    settings_->login.tls = tls::ClientContext::Make(tls::CertificateRules{Check::kChain, "localhost", ""},
                                                    encrypt == Encrypt::kStrict);
    settings_->login.login_only_tls =
        tls::ClientContext::Make(tls::CertificateRules{Check::kNone, "", ""}, false);
    const auto actual = Drain(*MakeTdsChangeReader(settings_, Plan(), clock, TdsFallback{}));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t b = 0; b < expected.size(); ++b) {
      EXPECT_TRUE(actual[b]->Equals(*expected[b])) << actual[b]->ToString();
    }
  }
  EXPECT_EQ(served_->logins(), 3);
}

// An Entra ID access token travels in LOGIN7's FEDAUTH feature, inside TLS; over a connection
// that would carry it in plaintext the reader gives way to the driver instead.
TEST_F(TdsChangeReaderTest, LogsInWithAnAccessTokenOverTlsAndNeverSendsOneInPlaintext) {
  constexpr char kToken[] = "eyJhbGciOiJub25lIn0.eyJvaWQiOiJ0ZXN0In0.c2ln";
  sim::SimDatabase::Open(path_)->AddTokenLogin("etl_app", kToken, /*is_db_owner=*/true);
  served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_, /*tls=*/true);
  mssql_cdc::testing::TestServerCertificates();
  settings_->login.host = "localhost";
  settings_->login.port = served_->port();
  settings_->login.user.clear();
  settings_->login.password.clear();
  settings_->login.access_token = kToken;
  settings_->login.encrypt = tds::ClientLogin::Encrypt::kYes;
  settings_->login.tls = tls::ClientContext::Make(
      tls::CertificateRules{tls::CertificateRules::Check::kChain, "localhost", ""}, false);
  const SourceClock clock = SourceClock::Utc();
  const auto expected = Drain(*sim_->ReadChanges(Request(), clock));
  const auto actual = Drain(*MakeTdsChangeReader(settings_, Plan(), clock, TdsFallback{}));
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) EXPECT_TRUE(actual[b]->Equals(*expected[b]));
  EXPECT_EQ(served_->logins(), 1);

  // A wrong token is the server's refusal, which the driver then reports (here: no fallback).
  settings_->slot = std::make_shared<TdsConnectionSlot>();
  settings_->login.access_token = std::string(kToken) + "x";
  try {
    Drain(*MakeTdsChangeReader(settings_, Plan(), clock, TdsFallback{}));
    FAIL() << "logged in with a token the server does not know";
  } catch (const PermissionError& e) {
    EXPECT_THAT(e.what(), Not(HasSubstr(kToken)));
  }

  // A server without TLS would see the token: the read goes to the fallback, never the token.
  served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_, /*tls=*/false);
  settings_->slot = std::make_shared<TdsConnectionSlot>();
  settings_->login.port = served_->port();
  settings_->login.access_token = kToken;
  settings_->login.encrypt = tds::ClientLogin::Encrypt::kNo;
  settings_->login.login_only_tls =
      tls::ClientContext::Make(tls::CertificateRules{tls::CertificateRules::Check::kNone, "", ""}, false);
  std::vector<std::string> reasons;
  TdsFallback fallback;
  fallback.make_reader = [this, &clock] { return sim_->ReadChanges(Request(), clock); };
  fallback.on_fallback = [&](const std::string& reason, bool) { reasons.push_back(reason); };
  Drain(*MakeTdsChangeReader(settings_, Plan(), clock, fallback));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("an access token is sent only encrypted"));
  EXPECT_EQ(served_->logins(), 0);
}

// The reader measures how long it waited for the server's bytes (the facts' network_wait_ms):
// a server that sends 1 KiB a second keeps it waiting most of the read.
TEST_F(TdsChangeReaderTest, MeasuresItsWaitForTheServersBytes) {
  const SourceClock clock = SourceClock::Utc();
  ChangeReadPlan plan = Plan();
  plan.waits = std::make_shared<ReadWaits>();
  Drain(*MakeTdsChangeReader(settings_, plan, clock, TdsFallback{}));
  ASSERT_TRUE(plan.waits->network_wait_ms.has_value());
  EXPECT_GE(*plan.waits->network_wait_ms, 0.0);

  // The reply of the change rows is over a kilobyte.
  served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_, /*tls=*/false,
                                                            /*send_bytes_per_second=*/1024);
  settings_->login.port = served_->port();
  settings_->slot = std::make_shared<TdsConnectionSlot>();
  plan.waits = std::make_shared<ReadWaits>();
  const auto batches = Drain(*MakeTdsChangeReader(settings_, plan, clock, TdsFallback{}));
  EXPECT_FALSE(batches.empty());
  ASSERT_TRUE(plan.waits->network_wait_ms.has_value());
  EXPECT_GE(*plan.waits->network_wait_ms, 400.0);
}

// A certificate the driver would refuse is the driver path's ConfigError at once, not a
// fallback and not a retry.
TEST_F(TdsChangeReaderTest, ACertificateForAnotherNameIsAConfigErrorWithTheDriversReason) {
  served_ = std::make_unique<mssql_cdc::testing::ServedSim>(path_, /*tls=*/true);
  mssql_cdc::testing::TestServerCertificates();
  settings_->login.port = served_->port();  // host 127.0.0.1: not the certificate's name
  settings_->login.encrypt = tds::ClientLogin::Encrypt::kYes;
  settings_->login.tls = tls::ClientContext::Make(
      tls::CertificateRules{tls::CertificateRules::Check::kChain, "127.0.0.1", ""}, false);
  bool fell_back = false;
  TdsFallback fallback;
  fallback.make_reader = [&] {
    fell_back = true;
    return sim_->ReadChanges(Request(), SourceClock::Utc());
  };
  try {
    Drain(*MakeTdsChangeReader(settings_, Plan(), SourceClock::Utc(), fallback));
    FAIL() << "read from a server whose certificate names another host";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("certificate verify failed:subject name does not match host name"));
    EXPECT_THAT(e.what(), HasSubstr("HostNameInCertificate"));
  }
  EXPECT_FALSE(fell_back);
  EXPECT_EQ(served_->logins(), 0);
}

TEST_F(TdsChangeReaderTest, AColumnItDoesNotDecodeHandsTheReadToTheFallbackBeforeAnyRow) {
  ChangeReadPlan plan = Plan();
  // The stream's schema says qty is a date; the server sends an int.
  for (auto& column : plan.columns) {
    if (column.name == "qty") column.type = SqlType::Parse("date");
  }
  const SourceClock clock = SourceClock::Utc();
  const auto expected = Drain(*sim_->ReadChanges(Request(), clock));

  std::vector<std::string> reasons;
  bool every_read = true;
  TdsFallback fallback;
  fallback.make_reader = [this, &clock] { return sim_->ReadChanges(Request(), clock); };
  fallback.on_fallback = [&](const std::string& reason, bool connection_wide) {
    reasons.push_back(reason);
    every_read = connection_wide;
  };
  const auto actual = Drain(*MakeTdsChangeReader(settings_, plan, clock, fallback));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("column 'qty'"));
  EXPECT_FALSE(every_read);  // the columns' fault, not the connection's
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t b = 0; b < expected.size(); ++b) EXPECT_TRUE(actual[b]->Equals(*expected[b]));

  // Without a fallback (changeReader=tds) the same read fails and names the way out.
  try {
    Drain(*MakeTdsChangeReader(settings_, plan, clock, TdsFallback{}));
    FAIL() << "read a date column from an int";
  } catch (const SourceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("column 'qty'"));
    EXPECT_THAT(e.what(), HasSubstr("set changeReader=driver"));
  }
}

TEST_F(TdsChangeReaderTest, AWrongPasswordGivesWayWithAFallbackAndIsAPermissionErrorWithout) {
  settings_->login.password = "wrong-pw-1";
  const SourceClock clock = SourceClock::Utc();
  std::string why;
  bool every_read = false;
  TdsFallback fallback;
  fallback.make_reader = [this, &clock] { return sim_->ReadChanges(Request(), clock); };
  fallback.on_fallback = [&](const std::string& reason, bool connection_wide) {
    why = reason;
    every_read = connection_wide;
  };
  EXPECT_FALSE(Drain(*MakeTdsChangeReader(settings_, Plan(), clock, fallback)).empty());
  EXPECT_THAT(why, HasSubstr("logging in"));
  EXPECT_TRUE(every_read);
  EXPECT_THAT(why, ::testing::Not(HasSubstr("wrong-pw-1")));
  try {
    Drain(*MakeTdsChangeReader(settings_, Plan(), clock, TdsFallback{}));
    FAIL() << "logged in with a wrong password";
  } catch (const PermissionError& e) {
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("wrong-pw-1")));
  }
}

}  // namespace
}  // namespace mssql_cdc::odbc
