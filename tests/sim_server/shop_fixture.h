// A sim database "shop" served by the statement engine, for the tests of its answers:
//   dbo.orders(id, region) -> capture instance dbo_orders, every kind of value
//   sales.items(line)      -> capture instance sales_items
// three commits (two inserts; an update and an insert into items; a delete), and three logins:
// owner (db owner), reader (SELECT on cdc.dbo_orders_CT) and nobody (no grants). Statements
// run through a SimQueryHandler per login, as a connection's would, into a RecordingReply.
// Header-only.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "params.h"
#include "recording_reply.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "sim_server/session.h"
#include "sim_server/sim_query_handler.h"
#include "tests/testing/temp_dir.h"

namespace mssql_cdc::testing {

inline std::string LsnBytes(const Lsn& lsn) {
  return std::string(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize);
}

class ShopFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::CreateOptions options;
    options.database_name = "shop";
    options.time_zone = "Pacific Standard Time";
    options.clock = sim::ClockMode::kManual;
    options.manual_start = UtcMicros{*ParseDateTime("2026-03-01 10:00:00")};
    db_ = sim::SimDatabase::Create(dir_.File("shop.db"), options);

    sim::TableDef orders;
    orders.name = orders_;
    for (const char* c : {"id int not null", "region nvarchar(20) not null", "amount decimal(18,2)",
                          "placed datetime2(3)", "note nvarchar(max)", "raw varbinary(16)",
                          "flag bit", "ratio float", "guid uniqueidentifier"}) {
      orders.columns.push_back(sim::ParseColumnDeclaration(c));
    }
    orders.primary_key = {"id", "region"};
    db_->CreateTable(orders);
    db_->EnableCdc(orders_);

    sim::TableDef items;
    items.name = items_;
    for (const char* c : {"line int not null", "sku varchar(20)", "qty smallint"}) {
      items.columns.push_back(sim::ParseColumnDeclaration(c));
    }
    items.primary_key = {"line"};
    db_->CreateTable(items);
    db_->EnableCdc(items_);

    db_->AdvanceClock(60'000'000);
    auto first = db_->Begin();
    first->Insert(orders_, {{"id", 1}, {"region", "west"}, {"amount", "12.50"},
                            {"placed", "2026-01-02 03:04:05.678"}, {"note", "héllo"},
                            {"raw", sim::Bytes{std::string("\x01\x00\xFF", 3)}}, {"flag", 1},
                            {"ratio", 0.5}, {"guid", "6F9619FF-8B86-D011-B42D-00C04FC964FF"}});
    first->Insert(orders_, {{"id", 2}, {"region", "east"}, {"amount", "-3.00"}});
    commits_.push_back(*first->Commit().commit_lsn);

    db_->AdvanceClock(60'000'000);
    auto second = db_->Begin();
    second->Update(orders_, {{"id", 1}, {"region", "west"}}, {{"amount", "13.75"}});
    second->Insert(items_, {{"line", 1}, {"sku", "sku-1"}, {"qty", 5}});
    commits_.push_back(*second->Commit().commit_lsn);

    db_->AdvanceClock(60'000'000);
    auto third = db_->Begin();
    third->Delete(orders_, {{"id", 2}, {"region", "east"}});
    commits_.push_back(*third->Commit().commit_lsn);

    db_->AddLogin("owner", "owner-pw", true);
    db_->AddLogin("reader", "reader-pw", false);
    db_->AddLogin("nobody", "nobody-pw", false);
    db_->Grant("reader", "cdc.dbo_orders_CT");
  }

  // Runs `sql` as `login` on that login's connection.
  RecordingReply Run(const std::string& sql, const std::vector<tds::ParamValue>& params = {},
                     const std::string& login = "owner") {
    auto& handler = handlers_[login];
    if (!handler) {
      const auto info = db_->catalog().FindLogin(login);
      if (!info) throw std::runtime_error("no login " + login);
      handler = std::make_unique<sim_server::SimQueryHandler>(
          std::make_unique<sim_server::Session>(db_->path(), "shop", *info, 51));
    }
    tds::Statement statement{sql, params, !params.empty()};
    RecordingReply reply;
    handler->Execute(statement, reply);
    return reply;
  }

  std::vector<tds::ParamValue> Range(const Lsn& from, const Lsn& to) {
    return {LsnParam("@P1", from), LsnParam("@P2", to)};
  }

  TempDir dir_;
  std::unique_ptr<sim::SimDatabase> db_;
  sim::TableName orders_ = sim::ParseTableName("dbo.orders");
  sim::TableName items_ = sim::ParseTableName("sales.items");
  std::vector<Lsn> commits_;  // the three data commits, in order
  std::map<std::string, std::unique_ptr<sim_server::SimQueryHandler>> handlers_;
};

}  // namespace mssql_cdc::testing
