// Chunked snapshots on Spark (engine/backfill.h): the engine opens the snapshot and runs each
// backfill call, deciding everything as for a native stream; the writes and the reads of the
// session's tables are made by a Python object (mssql_cdc.backfill.SparkBackfillTables), so
// that named tables go through their catalog and a wave's chunks are read by Spark's tasks.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <arrow/api.h>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "delta/schema.h"
#include "engine/backfill.h"
#include "feed/change_feed.h"
#include "engine/table_schemas.h"
#include "core/table_ref.h"
#include "bindings/arrow_stream.h"
#include "bindings/events_json.h"
#include "bindings/found_snapshot.h"
#include "bindings/resnapshot_request.h"
#include "bindings/source_options.h"
#include "snapshot/plans_table.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

// BackfillTables whose reads and writes a Python object makes: snapshot_events() -> JSON list,
// newest_headroom(app_id) -> (hours, age_hours) | None, plans_columns() -> [name] | None,
// read_plan(snapshot) -> pyarrow.Table (the plans table's rows of S) | None,
// write_plan(batch, txn_app_id, txn_version), last_wave(txn_app_id) -> (version,
// user_metadata | None), chunk_rows(snapshot) -> {chunk: rows}, append_wave(wave_json,
// txn_app_id, txn_version, user_metadata) -> {chunk: rows}, append_facts(batch, txn_app_id,
// txn_version), find_snapshot(instances) -> (lsn, chunked) | None.
class PythonBackfillTables final : public BackfillTables {
 public:
  PythonBackfillTables(nb::object tables, std::string plans_table)
      : tables_(std::move(tables)), plans_table_(std::move(plans_table)) {}

  std::vector<SnapshotEvent> SnapshotEvents() override {
    nb::gil_scoped_acquire gil;
    return EventsOfJson(nb::cast<std::string>(tables_.attr("snapshot_events")()));
  }
  std::optional<std::pair<double, double>> NewestHeadroom(const std::string& app_id) override {
    nb::gil_scoped_acquire gil;
    nb::object found = tables_.attr("newest_headroom")(app_id);
    if (found.is_none()) return std::nullopt;
    return nb::cast<std::pair<double, double>>(found);
  }
  std::optional<std::vector<std::string>> PlansColumns() override {
    nb::gil_scoped_acquire gil;
    return nb::cast<std::optional<std::vector<std::string>>>(tables_.attr("plans_columns")());
  }
  std::optional<ChunkPlan> ReadPlan(const std::string& app_id, const Lsn& snapshot) override {
    std::shared_ptr<arrow::Table> rows;
    {
      nb::gil_scoped_acquire gil;
      nb::object table = tables_.attr("read_plan")(snapshot.ToString());
      if (table.is_none()) return std::nullopt;
      auto reader = ImportArrowStream(table, "read_plan()");
      auto read = reader->ToTable();
      if (!read.ok()) throw InternalError("plans table rows: " + read.status().ToString());
      rows = *read;
    }
    return PlanFromTable(*rows, app_id, snapshot, plans_table_);
  }
  bool WritePlan(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) override {
    nb::gil_scoped_acquire gil;
    return nb::cast<bool>(tables_.attr("write_plan")(ToPyArrowBatch(rows), txn.app_id, txn.version));
  }
  std::pair<std::int64_t, std::optional<std::string>> LastWave(const std::string& txn_app_id) override {
    nb::gil_scoped_acquire gil;
    return nb::cast<std::pair<std::int64_t, std::optional<std::string>>>(
        tables_.attr("last_wave")(txn_app_id));
  }
  std::map<int, std::int64_t> ChunkRows(const Lsn& snapshot) override {
    nb::gil_scoped_acquire gil;
    return nb::cast<std::map<int, std::int64_t>>(tables_.attr("chunk_rows")(snapshot.ToString()));
  }
  WaveWritten AppendWave(const WaveRead& wave, const delta::Txn& txn,
                         const std::function<std::string(const WaveWritten&)>& metadata) override {
    nlohmann::json chunks = nlohmann::json::array();
    for (const auto& chunk : wave.chunks) chunks.push_back({chunk.index, chunk.lo, chunk.hi});
    const std::string wave_json = nlohmann::json{{"lsn", wave.stamp.lsn.ToString()},
                                                 {"snapshot", wave.snapshot.ToString()},
                                                 {"keys", wave.keys},
                                                 {"chunks", chunks}}
                                      .dump();
    // Spark counts a wave's rows after its commit: the commit records its chunks only.
    const std::string user_metadata = metadata(WaveWritten{});
    WaveWritten written;
    nb::gil_scoped_acquire gil;
    written.rows = nb::cast<std::map<int, std::int64_t>>(
        tables_.attr("append_wave")(wave_json, txn.app_id, txn.version, user_metadata));
    return written;
  }
  void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& rows, const delta::Txn& txn) override {
    nb::gil_scoped_acquire gil;
    tables_.attr("append_facts")(ToPyArrowBatch(rows), txn.app_id, txn.version);
  }
  std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) override {
    nb::gil_scoped_acquire gil;
    return FindSnapshotThrough(tables_, instances);
  }

 private:
  nb::object tables_;
  std::string plans_table_;
};

// A backfill call's budget, checked (ConfigError) before anything is read.
BackfillRequest BudgetOf(std::optional<std::int64_t> chunk_rows, std::optional<std::int64_t> max_waves,
                         std::optional<double> max_seconds, std::optional<double> target_wave_seconds,
                         std::optional<double> min_headroom_hours) {
  BackfillRequest request;
  request.chunk_rows = chunk_rows;
  request.max_waves = max_waves;
  request.max_seconds = max_seconds;
  request.target_wave_seconds = target_wave_seconds;
  request.min_headroom_hours = min_headroom_hours;
  ValidateBackfillRequest(request);
  return request;
}

}  // namespace

void BindBackfill(nb::module_& m) {
  m.def("plans_table_for", &PlansTableFor, nb::arg("target"),
        "The plans table beside bronze `target`: its name or path with _snapshot_plans appended.");
  m.def("plans_schema_json", [] { return delta::ToDeltaSchemaString(*PlanEventsSchema()); },
        "The schema of a plans table made now (one row per snapshot event) as Spark StructType JSON.");
  m.def("chunk_plans_schema_json", [] { return delta::ToDeltaSchemaString(*PlansSchema()); },
        "The schema of a plans table of an earlier release (one row per chunk) as Spark StructType JSON.");
  m.def("ensure_plans",
        [](const std::string& uri) {
          TableRef::RequirePath(uri, "plans table");
          nb::gil_scoped_release release;
          OpenOrCreateTable(uri, PlansTableOptions());
        },
        nb::arg("uri"), "Creates the plans table at path `uri` when missing.");
  m.def("open_chunked",
        [](nb::handle options, nb::object tables, const std::string& target, const std::string& app_id,
           const std::string& facts_table, const std::string& checkpoint,
           const std::optional<std::string>& resnapshot) -> std::optional<std::string> {
          SourceOptions parsed = ParseSourceOptions(options);
          PythonBackfillTables writer(std::move(tables), PlansTableFor(target));
          FeedBootstrapRequest request{target, app_id, checkpoint, facts_table};
          if (resnapshot) SetResnapshot(request, *resnapshot);
          nb::gil_scoped_release release;
          ChangeFeed feed(std::move(parsed));
          auto offset = feed.OpenChunked(request, writer);
          if (!offset) return std::nullopt;
          return offset->ToJson();
        },
        nb::arg("options"), nb::arg("tables"), nb::arg("target"), nb::arg("app_id"),
        nb::arg("facts_table"), nb::arg("checkpoint"), nb::arg("resnapshot") = nb::none(),
        "Opens the chunked snapshot of stream app_id (or finds it open or complete): the "
        "offset JSON the stream starts after. None when bronze holds a snapshot of the table "
        "the facts rows do not know (the full bootstrap then starts from it).");
  m.def("backfill",
        [](nb::handle options, nb::object tables, const std::string& target, const std::string& app_id,
           std::optional<std::int64_t> chunk_rows, std::optional<std::int64_t> max_waves,
           std::optional<double> max_seconds, std::optional<double> target_wave_seconds,
           std::optional<double> min_headroom_hours) {
          SourceOptions parsed = ParseSourceOptions(options);
          BackfillRequest request = BudgetOf(chunk_rows, max_waves, max_seconds, target_wave_seconds,
                                             min_headroom_hours);
          request.app_id = app_id;
          request.target = target;
          request.plans_table = PlansTableFor(target);
          PythonBackfillTables writer(std::move(tables), request.plans_table);
          nb::gil_scoped_release release;
          ChangeFeed feed(std::move(parsed));
          return feed.Backfill(std::move(request), writer).ToJson();
        },
        nb::arg("options"), nb::arg("tables"), nb::arg("target"), nb::arg("app_id"),
        nb::arg("chunk_rows").none(), nb::arg("max_waves").none(), nb::arg("max_seconds").none(),
        nb::arg("target_wave_seconds").none(), nb::arg("min_headroom_hours").none(),
        "One backfill call of the stream's newest chunked snapshot; the BackfillStatus JSON.");
  m.def("validate_backfill",
        [](std::optional<std::int64_t> chunk_rows, std::optional<std::int64_t> max_waves,
           std::optional<double> max_seconds, std::optional<double> target_wave_seconds,
           std::optional<double> min_headroom_hours) {
          BudgetOf(chunk_rows, max_waves, max_seconds, target_wave_seconds, min_headroom_hours);
        },
        nb::arg("chunk_rows").none(), nb::arg("max_waves").none(), nb::arg("max_seconds").none(),
        nb::arg("target_wave_seconds").none(), nb::arg("min_headroom_hours").none(),
        "ConfigError for a backfill budget out of range, before anything is read.");
  m.def("check_mode_lock",
        [](const std::string& events_json, const std::string& app_id, const std::string& mode,
           const std::string& what) {
          if (mode != "full" && mode != "chunked") throw InternalError("snapshot mode '" + mode + "'");
          CheckModeLock(EventsOfJson(events_json), app_id,
                        mode == "chunked" ? SnapshotMode::kChunked : SnapshotMode::kFull, what);
        },
        nb::arg("events_json"), nb::arg("app_id"), nb::arg("mode"), nb::arg("what"),
        "ConfigError when stream app_id has an open snapshot of another mode than `mode` "
        "(\"full\" or \"chunked\"), among the facts rows' snapshot events (JSON list).");
}

}  // namespace mssql_cdc::python
