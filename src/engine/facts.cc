#include "core/facts_events.h"
#include "engine/facts.h"

#include <arrow/api.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "engine/table_schemas.h"

namespace mssql_cdc {
namespace {

void Check(const arrow::Status& status, const char* what) {
  if (!status.ok()) throw InternalError(std::string("building facts column ") + what + ": " +
                                        status.ToString());
}

template <typename T>
using Getter = std::function<std::optional<T>(const FactsRow&)>;

// One column of the batch: a value per row, NULL where the getter has none.
// Every builder used takes (type, pool), so one function serves every column type.
template <typename Builder, typename T>
std::shared_ptr<arrow::Array> BuildColumn(const std::vector<FactsRow>& rows,
                                          const std::shared_ptr<arrow::Field>& field,
                                          const Getter<T>& get) {
  Builder builder(field->type(), arrow::default_memory_pool());
  Check(builder.Reserve(static_cast<std::int64_t>(rows.size())), field->name().c_str());
  for (const auto& row : rows) {
    auto value = get(row);
    Check(value ? builder.Append(*value) : builder.AppendNull(), field->name().c_str());
  }
  std::shared_ptr<arrow::Array> array;
  Check(builder.Finish(&array), field->name().c_str());
  return array;
}

Getter<std::int64_t> Micros(std::optional<UtcMicros> FactsRow::*member) {
  return [member](const FactsRow& row) -> std::optional<std::int64_t> {
    const auto& value = row.*member;
    if (!value) return std::nullopt;
    return value->value;
  };
}

template <typename T>
Getter<T> Field(std::optional<T> FactsRow::*member) {
  return [member](const FactsRow& row) { return row.*member; };
}

nlohmann::ordered_json JsonOrNull(const std::optional<std::int64_t>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json JsonOrNull(const std::optional<std::string>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json JsonOrNull(const std::optional<UtcMicros>& value) {
  return value ? nlohmann::ordered_json(FormatIsoMillis(value->value))
               : nlohmann::ordered_json(nullptr);
}

// An event row at one LSN (min = max = end = the event's), nothing counted.
FactsRow EventRow(const std::string& app_id, const std::string& target, std::string_view event,
                  const Offset& at) {
  FactsRow row;
  row.app_id = app_id;
  row.rows = 0;
  row.min_lsn = row.max_lsn = row.end_lsn = at.lsn.ToString();
  row.min_commit_ts = row.max_commit_ts = row.end_commit_ts = at.commit_ts;
  row.deletes = row.inserts = row.updates = 0;
  row.started_at = NowUtc();
  row.duration_ms = 0;
  row.event = std::string(event);
  row.target = target;
  row.written_at = NowUtc();
  return row;
}


}  // namespace

std::shared_ptr<arrow::RecordBatch> FactsToRecordBatch(const std::vector<FactsRow>& rows) {
  const auto schema = FactsSchema();
  int next = 0;  // the schema field the next column fills
  arrow::ArrayVector columns;
  auto strings = [&](const Getter<std::string>& get) {
    columns.push_back(BuildColumn<arrow::StringBuilder>(rows, schema->field(next++), get));
  };
  auto int64s = [&](const Getter<std::int64_t>& get) {
    columns.push_back(BuildColumn<arrow::Int64Builder>(rows, schema->field(next++), get));
  };
  auto doubles = [&](const Getter<double>& get) {
    columns.push_back(BuildColumn<arrow::DoubleBuilder>(rows, schema->field(next++), get));
  };
  auto timestamps = [&](const Getter<std::int64_t>& get) {
    columns.push_back(BuildColumn<arrow::TimestampBuilder>(rows, schema->field(next++), get));
  };

  strings([](const FactsRow& row) -> std::optional<std::string> { return row.app_id; });
  int64s(Field(&FactsRow::batch_id));
  int64s(Field(&FactsRow::rows));
  strings(Field(&FactsRow::min_lsn));
  strings(Field(&FactsRow::max_lsn));
  timestamps(Micros(&FactsRow::min_commit_ts));
  timestamps(Micros(&FactsRow::max_commit_ts));
  int64s(Field(&FactsRow::deletes));
  int64s(Field(&FactsRow::inserts));
  int64s(Field(&FactsRow::updates));
  timestamps(Micros(&FactsRow::started_at));
  int64s(Field(&FactsRow::duration_ms));
  doubles(Field(&FactsRow::source_rtt_ms));
  doubles(Field(&FactsRow::read_seconds));
  doubles(Field(&FactsRow::read_mb));
  int64s(Field(&FactsRow::network_wait_ms));
  timestamps(Micros(&FactsRow::retention_watermark_ts));
  doubles(Field(&FactsRow::retention_headroom_hours));
  strings(Field(&FactsRow::event));
  timestamps(Micros(&FactsRow::lost_from_ts));
  timestamps(Micros(&FactsRow::lost_to_ts));
  timestamps(Micros(&FactsRow::source_max_commit_ts));
  doubles(Field(&FactsRow::capture_lag_seconds));
  doubles(Field(&FactsRow::ingestion_lag_seconds));
  strings(Field(&FactsRow::end_lsn));
  timestamps(Micros(&FactsRow::end_commit_ts));
  strings(Field(&FactsRow::detail));
  strings(Field(&FactsRow::target));
  timestamps(Micros(&FactsRow::written_at));

  if (next != schema->num_fields()) {
    throw InternalError("facts batch built " + std::to_string(next) + " columns, the schema has " +
                        std::to_string(schema->num_fields()));
  }
  return arrow::RecordBatch::Make(schema, static_cast<std::int64_t>(rows.size()),
                                  std::move(columns));
}

std::string BatchUserMetadata(const FactsRow& row, const std::optional<std::string>& start_lsn) {
  nlohmann::ordered_json doc;
  doc["rows"] = JsonOrNull(row.rows);
  doc["min_lsn"] = JsonOrNull(row.min_lsn);
  doc["max_lsn"] = JsonOrNull(row.max_lsn);
  doc["min_commit_ts"] = JsonOrNull(row.min_commit_ts);
  doc["max_commit_ts"] = JsonOrNull(row.max_commit_ts);
  doc["deletes"] = JsonOrNull(row.deletes);
  doc["inserts"] = JsonOrNull(row.inserts);
  doc["updates"] = JsonOrNull(row.updates);
  doc["batch_id"] = JsonOrNull(row.batch_id);
  doc["app_id"] = row.app_id;
  if (start_lsn) doc["start_lsn"] = *start_lsn;
  if (row.end_lsn) doc["end_lsn"] = *row.end_lsn;
  return doc.dump();
}

FactsRow BootstrapFactsRow(const std::string& app_id, const std::string& target,
                           const Offset& offset, std::int64_t rows, UtcMicros started_at,
                           std::int64_t duration_ms) {
  FactsRow row = EventRow(app_id, target, facts_event::kBootstrap, offset);
  row.rows = rows;
  row.started_at = started_at;
  row.duration_ms = duration_ms;
  return row;
}

namespace {

// What a snapshot_open row's detail says of any snapshot: mode, kind, generation, lost interval.
nlohmann::json OpenDetail(const std::string& mode, const SnapshotCause& cause) {
  auto time = [](const std::optional<UtcMicros>& t) {
    return t ? nlohmann::json(FormatIsoMillis(t->value)) : nlohmann::json(nullptr);
  };
  return {{"mode", mode},
          {"kind", cause.kind},
          {"generation", cause.generation},
          {"lost_from_ts", time(cause.lost_from_ts)},
          {"lost_to_ts", time(cause.lost_to_ts)}};
}

// A snapshot_open row of `cause`, its detail still to be written.
FactsRow OpenRow(const std::string& app_id, const std::string& target, const Offset& offset,
                 const SnapshotCause& cause) {
  FactsRow row = EventRow(app_id, target, facts_event::kSnapshotOpen, offset);
  row.lost_from_ts = cause.lost_from_ts;
  row.lost_to_ts = cause.lost_to_ts;
  return row;
}

}  // namespace

FactsRow SnapshotOpenFactsRow(const std::string& app_id, const std::string& target,
                              const Offset& offset, const SnapshotCause& cause) {
  FactsRow row = OpenRow(app_id, target, offset, cause);
  row.detail = OpenDetail("full", cause).dump();
  return row;
}

FactsRow ChunkedOpenFactsRow(const std::string& app_id, const std::string& target,
                             const Offset& offset, const SnapshotCause& cause) {
  FactsRow row = OpenRow(app_id, target, offset, cause);
  row.detail = OpenDetail("chunked", cause).dump();
  return row;
}

FactsRow SnapshotPlanFactsRow(const std::string& app_id, const std::string& target,
                              const Offset& snapshot, const std::string& kind,
                              const std::vector<std::string>& keys, std::int64_t chunk_rows,
                              int chunks, const std::string& digest,
                              const std::string& plans_table) {
  FactsRow row = EventRow(app_id, target, facts_event::kSnapshotPlan, snapshot);
  row.detail = nlohmann::json{{"snapshot", snapshot.lsn.ToString()},
                              {"kind", kind},
                              {"keys", keys},
                              {"chunk_rows", chunk_rows},
                              // Named as 0.8.0 names it: 0.8.0 reads "chunks" as the list of
                              // bounds that facts rows of its earlier releases held.
                              {"chunk_count", chunks},
                              {"digest", digest},
                              {"plans_table", plans_table}}
                   .dump();
  return row;
}

FactsRow SnapshotChunkFactsRow(const std::string& app_id, const std::string& target,
                               const Lsn& snapshot, std::int64_t wave, const ChunkFacts& chunk,
                               const Offset& stamp, const std::optional<Lsn>& max_lsn_after,
                               UtcMicros started_at, std::int64_t duration_ms) {
  FactsRow row = EventRow(app_id, target, facts_event::kSnapshotChunk, stamp);
  row.rows = chunk.rows;
  row.inserts = 0;
  if (max_lsn_after) row.max_lsn = max_lsn_after->ToString();
  row.started_at = started_at;
  row.duration_ms = duration_ms;
  row.read_seconds = chunk.read_seconds;
  row.detail = nlohmann::json{{"snapshot", snapshot.ToString()},
                              {"chunk", chunk.chunk},
                              {"wave", wave},
                              {"last", chunk.last}}
                   .dump();
  return row;
}

FactsRow ChunkedCompletionFactsRow(const std::string& app_id, const std::string& target,
                                   const std::string& kind, const Offset& snapshot, int chunks,
                                   std::int64_t rows, const Lsn& last_lsn, UtcMicros started_at,
                                   std::int64_t duration_ms) {
  FactsRow row = BootstrapFactsRow(app_id, target, snapshot, rows, started_at, duration_ms);
  row.event = kind;
  row.detail = nlohmann::json{{"snapshot", snapshot.lsn.ToString()},
                              {"chunks", chunks},
                              {"rows", rows},
                              {"last_lsn", last_lsn.ToString()}}
                   .dump();
  return row;
}

}  // namespace mssql_cdc
