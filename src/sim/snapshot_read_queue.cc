#include "sim/snapshot_read_queue.h"

#include <nlohmann/json.hpp>
#include <string>

#include "sim/catalog.h"
#include "sim/storage.h"
#include "sim/transaction.h"

namespace mssql_cdc::sim {
namespace {

// sim_meta's key for the queue: a JSON array of {"table", "at" (UTC micros or null),
// "changes": [[operation, {column: value}], ...]}.
constexpr std::string_view kMetaQueue = "queued_before_snapshot_read";

}  // namespace

void QueueBeforeSnapshotRead(SimDatabase& db, const TableName& table, const std::vector<LoggedChange>& changes,
                             std::optional<UtcMicros> at) {
  nlohmann::json entry = {{"table", table.ToString()},
                          {"at", at ? nlohmann::json(at->value) : nlohmann::json(nullptr)},
                          {"changes", nlohmann::json::array()}};
  for (const auto& change : changes) {
    nlohmann::json image = nlohmann::json::object();
    for (const auto& [column, value] : change.image) image[column] = value.ToJson();
    entry["changes"].push_back(nlohmann::json::array({change.operation, image}));
  }
  WriteTransaction tx(db.sqlite());
  auto queue = nlohmann::json::parse(db.catalog().GetMeta(kMetaQueue).value_or("[]"));
  queue.push_back(std::move(entry));
  db.catalog().SetMeta(kMetaQueue, queue.dump());
  tx.Commit();
}

bool HasQueuedBeforeSnapshotRead(SqliteDb& db) {
  Statement q(db, "SELECT 1 FROM sim_meta WHERE key = ?1");
  q.BindText(1, kMetaQueue);
  return q.Step();
}

int CommitQueuedBeforeSnapshotRead(SimDatabase& db) {
  nlohmann::json queue;
  {
    WriteTransaction tx(db.sqlite());
    const auto text = db.catalog().GetMeta(kMetaQueue);
    if (!text) return 0;
    queue = nlohmann::json::parse(*text);
    Statement claim(db.sqlite(), "DELETE FROM sim_meta WHERE key = ?1");
    claim.BindText(1, kMetaQueue).Run();
    tx.Commit();
  }
  int committed = 0;
  for (const auto& entry : queue) {
    db.SetManualClock(entry["at"].is_null() ? NowUtc() : UtcMicros{entry["at"].get<std::int64_t>()});
    auto transaction = db.Begin();
    for (const auto& change : entry["changes"]) {
      Row image;
      for (const auto& [column, value] : change.at(1).items()) image[column] = Value::FromJson(value);
      transaction->LogChange(ParseTableName(entry["table"].get<std::string>()), change.at(0).get<int>(),
                             std::move(image));
    }
    transaction->Commit();
    ++committed;
  }
  return committed;
}

}  // namespace mssql_cdc::sim
