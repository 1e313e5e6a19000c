// Shared by the stream tests: a simulated database with one table under CDC and a manual
// clock, stream configurations over it, and bronze read back as comparable change keys.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "core/options.h"
#include "core/source_options.h"
#include "core/trigger.h"
#include "delta/table.h"
#include "engine/stream.h"
#include "sim/database.h"
#include "sim/transaction.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_backend.h"

namespace mssql_cdc::stream_testing {

using testing::TempDir;

// (_start_lsn, _seqval, _operation): one change row's identity.
using ChangeKey = std::tuple<std::string, std::string, int>;

inline UtcMicros At(const char* text) { return UtcMicros{*ParseDateTime(text)}; }

class StreamTest : public ::testing::Test {
 protected:
  static constexpr char kInstance[] = "dbo_items";

  void SetUp() override {
    sim::CreateOptions options;
    options.clock = sim::ClockMode::kManual;
    options.manual_start = At("2026-03-01 00:00:00");
    db_ = sim::SimDatabase::Create(dir_.File("sim.db"), options);
    sim::TableDef table;
    table.name = items_;
    for (const char* c : {"id int not null", "name nvarchar(40)", "qty int"}) {
      table.columns.push_back(sim::ParseColumnDeclaration(c));
    }
    table.primary_key = {"id"};
    db_->CreateTable(table);
    db_->EnableCdc(items_);
  }

  // One commit inserting rows [first, first + count).
  Lsn Insert(int first, int count = 1) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    std::vector<sim::Row> rows;
    for (int id = first; id < first + count; ++id) {
      rows.push_back({{"id", id}, {"name", "item " + std::to_string(id)}, {"qty", id % 7}});
    }
    txn->InsertMany(items_, std::move(rows));
    return *txn->Commit().commit_lsn;
  }
  Lsn Update(int id, int qty) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    txn->Update(items_, {{"id", id}}, {{"qty", qty}});
    return *txn->Commit().commit_lsn;
  }
  Lsn Delete(int id) {
    db_->AdvanceClock(1'000'000);
    auto txn = db_->Begin();
    txn->Delete(items_, {{"id", id}});
    return *txn->Commit().commit_lsn;
  }

  Options SourceOptionsText() const {
    return testing::BackendOptions(db_->path(), served_)
        .MergedWith(Options{{"captureInstance", kInstance}, {"sourceTimeZone", "UTC"}});
  }

  StreamConfig Config(const Options& extra = {}, const std::string& app_id = "app") const {
    StreamConfig config;
    config.source = SourceOptions::Parse(SourceOptionsText().MergedWith(extra));
    config.params.target = dir_.File("bronze");
    config.params.app_id = app_id;
    config.params.checkpoint = dir_.File("checkpoint");
    config.params.facts_table = dir_.File("facts");
    config.params.trigger = Trigger::AvailableNow();
    return config;
  }

  StreamProgress RunOnce(StreamConfig config) {
    Stream stream(std::move(config), nullptr);
    return stream.Run();
  }

  std::shared_ptr<arrow::Table> Bronze() const {
    return delta::DeltaTable::Open(dir_.File("bronze")).Read();
  }
  std::shared_ptr<arrow::Table> Facts() const {
    return delta::DeltaTable::Open(dir_.File("facts")).Read();
  }

  // Bronze's change rows (operation != 0) as a multiset of keys.
  std::multiset<ChangeKey> BronzeChanges() const {
    auto table = Bronze()->CombineChunks().ValueOrDie();
    auto lsn = std::static_pointer_cast<arrow::StringArray>(
        table->GetColumnByName("_start_lsn")->chunk(0));
    auto seq = std::static_pointer_cast<arrow::StringArray>(
        table->GetColumnByName("_seqval")->chunk(0));
    auto op = std::static_pointer_cast<arrow::Int32Array>(
        table->GetColumnByName("_operation")->chunk(0));
    std::multiset<ChangeKey> keys;
    for (std::int64_t i = 0; i < table->num_rows(); ++i) {
      if (op->Value(i) == 0) continue;
      keys.emplace(lsn->GetString(i), seq->GetString(i), op->Value(i));
    }
    return keys;
  }

  std::multiset<ChangeKey> SourceChanges() const {
    std::multiset<ChangeKey> keys;
    for (const auto& row : db_->ChangeRows(kInstance)) {
      keys.emplace(row.start_lsn.ToString(), row.seqval.ToString(), row.operation);
    }
    return keys;
  }

  // Rows per operation in bronze.
  std::map<int, std::int64_t> BronzeOperationCounts() const {
    std::map<int, std::int64_t> counts;
    for (const auto& key : BronzeChanges()) ++counts[std::get<2>(key)];
    return counts;
  }

  TempDir dir_;
  std::unique_ptr<sim::SimDatabase> db_;
  // The server of the odbc backend under test, started on first use.
  mutable std::unique_ptr<testing::ServedSim> served_;
  sim::TableName items_ = sim::ParseTableName("dbo.items");
};

// Column `name` of `table` as int64 values (NULL as -1), for small result tables.
inline std::vector<std::int64_t> Int64Column(const std::shared_ptr<arrow::Table>& table,
                                             const std::string& name) {
  std::vector<std::int64_t> out;
  auto column = table->GetColumnByName(name);
  for (const auto& chunk : column->chunks()) {
    auto cast = arrow::compute::Cast(*chunk, arrow::int64()).ValueOrDie();
    auto typed = std::static_pointer_cast<arrow::Int64Array>(cast);
    for (std::int64_t i = 0; i < typed->length(); ++i) {
      out.push_back(typed->IsNull(i) ? -1 : typed->Value(i));
    }
  }
  return out;
}

inline std::vector<std::optional<std::string>> StringColumn(
    const std::shared_ptr<arrow::Table>& table, const std::string& name) {
  std::vector<std::optional<std::string>> out;
  for (const auto& chunk : table->GetColumnByName(name)->chunks()) {
    auto typed = std::static_pointer_cast<arrow::StringArray>(chunk);
    for (std::int64_t i = 0; i < typed->length(); ++i) {
      if (typed->IsNull(i)) {
        out.emplace_back(std::nullopt);
      } else {
        out.emplace_back(typed->GetString(i));
      }
    }
  }
  return out;
}

}  // namespace mssql_cdc::stream_testing
