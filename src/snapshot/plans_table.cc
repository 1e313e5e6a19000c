#include "snapshot/plans_table.h"

#include <arrow/api.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/facts_events.h"
#include "delta/schema.h"
#include "delta/table_cells.h"

namespace mssql_cdc {
namespace {

void Check(const arrow::Status& status, const char* what) {
  if (!status.ok()) throw InternalError(std::string("plans table ") + what + ": " + status.ToString());
}

template <typename T>
T Value(const arrow::Result<T>& result, const char* what) {
  Check(result.status(), what);
  return *result;
}

}  // namespace

std::string PlansTableFor(const std::string& target) {
  std::string base = target;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "_snapshot_plans";
}

std::string PlanTxnAppId(const std::string& app_id, const Lsn& snapshot) {
  return app_id + "#snapplan." + snapshot.ToString();
}

std::shared_ptr<arrow::Schema> PlansSchema() {
  static const auto schema = arrow::schema({
      delta::CommentedField("app_id", arrow::utf8(), "the stream whose chunked snapshot this plan is (its app_id)"),
      delta::CommentedField("snapshot", arrow::utf8(),
             "the snapshot's LSN (0x plus 20 hex digits): _snapshot of its rows in bronze"),
      delta::CommentedField("capture_instance", arrow::utf8(), "the capture instance the snapshot reads"),
      delta::CommentedField("chunk", arrow::int32(), "the chunk's number, from 0 in key order"),
      delta::CommentedField("lo", arrow::utf8(),
             "the chunk's lower key bound, included, as JSON; null: from the first key"),
      delta::CommentedField("hi", arrow::utf8(),
             "the chunk's upper key bound, excluded, as JSON; null: to the last key"),
      delta::CommentedField("planned_rows", arrow::int64(),
             "rows the planner counted in the chunk (integer keys); NULL when it did not count"),
      delta::CommentedField("kind", arrow::utf8(),
             "how the keys were cut: 'int' (ranges of one integer key) or 'keyset'"),
      delta::CommentedField("keys", arrow::utf8(), "the key columns, as a JSON list, in order"),
      delta::CommentedField("chunk_rows", arrow::int64(), "the most rows a chunk was planned to hold"),
      delta::CommentedField("planned_at", arrow::timestamp(arrow::TimeUnit::MICRO), "when the plan was written, UTC"),
  });
  return schema;
}

std::shared_ptr<arrow::RecordBatch> PlanToRecordBatch(const ChunkPlan& plan,
                                                      const std::string& app_id,
                                                      const Lsn& snapshot,
                                                      const std::string& capture_instance,
                                                      UtcMicros planned_at) {
  arrow::StringBuilder app, snap, ci, lo, hi, kind, keys;
  arrow::Int32Builder chunk;
  arrow::Int64Builder planned_rows, chunk_rows;
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
  const std::string keys_json = nlohmann::json(plan.keys).dump();
  for (const Chunk& c : plan.chunks) {
    Check(app.Append(app_id), "app_id");
    Check(snap.Append(snapshot.ToString()), "snapshot");
    Check(ci.Append(capture_instance), "capture_instance");
    Check(chunk.Append(c.index), "chunk");
    Check(lo.Append(c.lo.dump()), "lo");
    Check(hi.Append(c.hi.dump()), "hi");
    Check(c.planned_rows ? planned_rows.Append(*c.planned_rows) : planned_rows.AppendNull(), "rows");
    Check(kind.Append(plan.kind), "kind");
    Check(keys.Append(keys_json), "keys");
    Check(chunk_rows.Append(plan.chunk_rows), "chunk_rows");
    Check(at.Append(planned_at.value), "planned_at");
  }
  arrow::ArrayVector columns(11);
  Check(app.Finish(&columns[0]), "app_id");
  Check(snap.Finish(&columns[1]), "snapshot");
  Check(ci.Finish(&columns[2]), "capture_instance");
  Check(chunk.Finish(&columns[3]), "chunk");
  Check(lo.Finish(&columns[4]), "lo");
  Check(hi.Finish(&columns[5]), "hi");
  Check(planned_rows.Finish(&columns[6]), "planned_rows");
  Check(kind.Finish(&columns[7]), "kind");
  Check(keys.Finish(&columns[8]), "keys");
  Check(chunk_rows.Finish(&columns[9]), "chunk_rows");
  Check(at.Finish(&columns[10]), "planned_at");
  return arrow::RecordBatch::Make(PlansSchema(), static_cast<std::int64_t>(plan.chunks.size()),
                                  columns);
}

PlansLayout PlansLayoutOf(const std::vector<std::string>& columns) {
  const auto has = [&](const char* name) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  };
  return !has("app_id") && has("snapshot") && has("event") && has("detail") ? PlansLayout::kEventRows
                                                                              : PlansLayout::kChunkRows;
}

std::shared_ptr<arrow::Schema> PlanEventsSchema() {
  static const auto schema = arrow::schema({
      delta::CommentedField("snapshot", arrow::utf8(),
                            "the snapshot's LSN S (0x plus 20 hex digits): _snapshot of its rows in "
                            "bronze, min_lsn of its snapshot_open facts row"),
      delta::CommentedField("event", arrow::utf8(),
                            "the facts event this row adds key values to: 'snapshot_open', "
                            "'snapshot_plan' or 'snapshot_chunk'"),
      delta::CommentedField("detail", arrow::utf8(),
                            "JSON: that facts row's detail with the key values it leaves out. "
                            "snapshot_open adds keys and plan, the key's extent at S ({kind: 'int', "
                            "lo, hi, rows} or {kind: 'keyset', max}); snapshot_plan holds chunks, "
                            "the [lo, hi) of every chunk in key order, fixed while the snapshot is "
                            "open; snapshot_chunk the chunk's lo and hi. A bound is null for an open "
                            "end, a list for a key of several columns"),
  });
  return schema;
}

namespace {

std::shared_ptr<arrow::RecordBatch> EventRows(const Lsn& snapshot, const std::string& event,
                                              const std::vector<nlohmann::ordered_json>& details) {
  arrow::StringBuilder snap, kind, detail;
  for (const auto& d : details) {
    Check(snap.Append(snapshot.ToString()), "snapshot");
    Check(kind.Append(event), "event");
    Check(detail.Append(d.dump()), "detail");
  }
  arrow::ArrayVector columns(3);
  Check(snap.Finish(&columns[0]), "snapshot");
  Check(kind.Finish(&columns[1]), "event");
  Check(detail.Finish(&columns[2]), "detail");
  return arrow::RecordBatch::Make(PlanEventsSchema(), static_cast<std::int64_t>(details.size()), columns);
}

// 0.8.0's plan: the detail of the first `snapshot_plan` row of S.
std::optional<ChunkPlan> PlanFromEventRows(const arrow::Table& rows, const std::string& stamp,
                                           const std::string& plans_table) {
  auto edited = [&](const std::string& what) {
    return ConfigError("plans table " + plans_table + " (mssql-cdc-pyspark 0.8.0's): the plan at LSN " +
                       stamp + " " + what + "; a plan is never edited: restore the table from its "
                       "history (Delta RESTORE to the version that wrote it), or start a new chunked "
                       "snapshot with a new app_id and checkpoint");
  };
  for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
    if (delta::TextCell(rows, "snapshot", r) != stamp) continue;
    if (delta::TextCell(rows, "event", r) != facts_event::kSnapshotPlan) continue;
    const auto detail = nlohmann::json::parse(delta::TextCell(rows, "detail", r).value_or(""), nullptr, false);
    if (!detail.is_object()) throw edited("has a detail that is not a JSON object");
    const auto kind = detail.find("kind"), keys = detail.find("keys"), chunks = detail.find("chunks");
    if (kind == detail.end() || !kind->is_string() || keys == detail.end() || !keys->is_array() ||
        chunks == detail.end() || !chunks->is_array()) {
      throw edited("lacks its kind, keys or chunks");
    }
    ChunkPlan plan;
    plan.kind = kind->get<std::string>();
    for (const auto& key : *keys) {
      if (!key.is_string()) throw edited("has a key that is not a column name");
      plan.keys.push_back(key.get<std::string>());
    }
    plan.chunk_rows = detail.value("chunk_rows", nlohmann::json()).is_number_integer()
                          ? detail["chunk_rows"].get<std::int64_t>() : 0;
    for (const auto& bounds : *chunks) {
      if (!bounds.is_array() || bounds.size() != 2) throw edited("has a chunk that is not [lo, hi]");
      plan.chunks.push_back(Chunk{static_cast<int>(plan.chunks.size()), bounds[0], bounds[1], std::nullopt});
    }
    return plan;
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<arrow::RecordBatch> OpenToEventRows(const Lsn& snapshot,
                                                    const nlohmann::ordered_json& detail) {
  return EventRows(snapshot, std::string(facts_event::kSnapshotOpen), {detail});
}

std::shared_ptr<arrow::RecordBatch> PlanToEventRows(const ChunkPlan& plan, const Lsn& snapshot) {
  nlohmann::ordered_json chunks = nlohmann::ordered_json::array();
  for (const Chunk& c : plan.chunks) chunks.push_back({c.lo, c.hi});
  return EventRows(snapshot, std::string(facts_event::kSnapshotPlan),
                   {nlohmann::ordered_json{{"snapshot", snapshot.ToString()},
                                           {"kind", plan.kind},
                                           {"keys", plan.keys},
                                           {"chunk_rows", plan.chunk_rows},
                                           {"chunks", chunks},
                                           {"chunk_count", plan.chunks.size()}}});
}

std::shared_ptr<arrow::RecordBatch> ChunksToEventRows(const ChunkPlan& plan, const Lsn& snapshot,
                                                      const std::vector<ChunkRead>& chunks) {
  std::vector<nlohmann::ordered_json> details;
  for (const ChunkRead& read : chunks) {
    if (read.chunk < 0 || read.chunk >= static_cast<int>(plan.chunks.size())) {
      throw InternalError("chunk " + std::to_string(read.chunk) + " is not in the plan");
    }
    const Chunk& c = plan.chunks[read.chunk];
    details.push_back({{"snapshot", snapshot.ToString()},
                       {"wave", read.wave},
                       {"chunk", read.chunk},
                       {"lo", c.lo},
                       {"hi", c.hi},
                       {"last", read.last}});
  }
  return EventRows(snapshot, std::string(facts_event::kSnapshotChunk), details);
}

std::optional<ChunkPlan> PlanFromTable(const arrow::Table& rows, const std::string& app_id,
                                       const Lsn& snapshot, const std::string& plans_table) {
  const std::string stamp = snapshot.ToString();
  if (PlansLayoutOf(rows.schema()->field_names()) == PlansLayout::kEventRows) {
    return PlanFromEventRows(rows, stamp, plans_table);
  }
  for (const auto& field : PlansSchema()->fields()) {
    if (!rows.schema()->GetFieldByName(field->name())) {
      throw ConfigError("plans table " + plans_table + " has no column '" + field->name() +
                        "': it is not a plans table of mssql-cdc");
    }
  }
  std::map<int, Chunk> chunks;
  std::optional<ChunkPlan> plan;
  auto edited = [&](const std::string& what) {
    return ConfigError("plans table " + plans_table + ": the plan of stream '" + app_id +
                       "' at LSN " + stamp + " " + what +
                       "; a plan is never edited: restore the table from its history (Delta "
                       "RESTORE to the version that wrote it), or start a new chunked snapshot "
                       "with a new app_id and checkpoint");
  };
  for (std::int64_t r = 0; r < rows.num_rows(); ++r) {
    if (delta::TextCell(rows, "app_id", r) != app_id) continue;
    if (delta::TextCell(rows, "snapshot", r) != stamp) continue;
    const auto kind = delta::TextCell(rows, "kind", r).value_or("");
    const auto keys_text = delta::TextCell(rows, "keys", r).value_or("");
    const auto chunk_rows = delta::IntCell(rows, "chunk_rows", r).value_or(0);
    auto keys = nlohmann::json::parse(keys_text, nullptr, false);
    if (!keys.is_array()) throw edited("has keys that are not a JSON list");
    if (!plan) {
      plan = ChunkPlan{};
      plan->kind = kind;
      plan->keys = keys.get<std::vector<std::string>>();
      plan->chunk_rows = chunk_rows;
    } else if (plan->kind != kind || plan->keys != keys.get<std::vector<std::string>>() ||
               plan->chunk_rows != chunk_rows) {
      throw edited("has rows that disagree on its kind, keys or chunk_rows");
    }
    const auto index = delta::IntCell(rows, "chunk", r);
    if (!index || *index < 0) throw edited("has a row without a chunk number");
    Chunk chunk;
    chunk.index = static_cast<int>(*index);
    for (auto [column, bound] : {std::pair{"lo", &chunk.lo}, std::pair{"hi", &chunk.hi}}) {
      auto parsed = nlohmann::json::parse(delta::TextCell(rows, column, r).value_or(""), nullptr, false);
      if (parsed.is_discarded()) throw edited(std::string("has a ") + column + " bound that is not JSON");
      *bound = std::move(parsed);
    }
    chunk.planned_rows = delta::IntCell(rows, "planned_rows", r);
    if (!chunks.emplace(chunk.index, chunk).second) {
      throw edited("has chunk " + std::to_string(chunk.index) + " twice");
    }
  }
  if (!plan) return plan;
  int expected = 0;
  for (auto& [index, chunk] : chunks) {
    if (index != expected) throw edited("lacks chunk " + std::to_string(expected));
    plan->chunks.push_back(chunk);
    ++expected;
  }
  return plan;
}

}  // namespace mssql_cdc
