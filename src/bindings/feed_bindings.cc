// Python access to Spark mode's reading side (decision 0004): the driver's ChangeFeed
// (feed/change_feed.h), the executors' range read (feed/feed_range.h), the bootstrap, and
// the hand-over from a native checkpoint. Offsets cross as their JSON text (core/offset.h),
// source options as a dict of strings parsed by SourceOptions::Parse.
#include <arrow/record_batch.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <tuple>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/offset.h"
#include "core/source_options.h"
#include "delta/schema.h"
#include "engine/bootstrap.h"
#include "feed/bronze_range.h"
#include "feed/change_feed.h"
#include "engine/facts.h"
#include "feed/feed_range.h"
#include "engine/stream_batch.h"
#include "fleet/stream_group.h"
#include "bindings/arrow_stream.h"
#include "bindings/found_snapshot.h"
#include "bindings/read_plan.h"
#include "bindings/resnapshot_request.h"
#include "bindings/source_options.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

std::optional<std::string> JsonOf(const std::optional<Offset>& offset) {
  return offset ? std::optional<std::string>(offset->ToJson()) : std::nullopt;
}

std::shared_ptr<arrow::Schema> SchemaOfJson(const std::optional<std::string>& json) {
  if (!json) return nullptr;
  return delta::FromDeltaSchemaString(*json, "the query's schema");
}

// A batch's schema events as the planner hands them to the sink (mssql_cdc.handoff).
std::string SchemaEventsJson(const std::vector<SchemaEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& event : events) {
    nlohmann::json e = {{"event", event.event}, {"lsn", event.lsn.ToString()}, {"detail", event.detail},
                        {"capture_instance", event.capture_instance}};
    e["commit_ts"] = event.commit_ts ? nlohmann::json(event.commit_ts->value) : nlohmann::json();
    out.push_back(std::move(e));
  }
  return out.dump();
}

std::vector<SchemaEvent> SchemaEventsFromJson(const std::string& text) {
  std::vector<SchemaEvent> out;
  for (const auto& e : nlohmann::json::parse(text)) {
    SchemaEvent event{e.at("event").get<std::string>(), Lsn::Parse(e.at("lsn").get<std::string>()),
                      e.at("detail").get<std::string>(), e.value("capture_instance", ""), std::nullopt};
    if (!e.at("commit_ts").is_null()) event.commit_ts = UtcMicros{e.at("commit_ts").get<std::int64_t>()};
    out.push_back(std::move(event));
  }
  return out;
}

class PyFeed {
 public:
  PyFeed(nb::handle options, const std::optional<std::string>& query_schema)
      : feed_(ParseSourceOptions(options), nullptr, SchemaOfJson(query_schema)) {}

  const std::string& CaptureInstance() const { return feed_.instance().name; }
  std::vector<std::string> TableInstances() { return feed_.TableInstances(); }
  std::vector<std::string> IndexColumns() const { return feed_.instance().index_columns; }

  std::string SparkSchemaJson() const { return delta::ToDeltaSchemaString(*feed_.output_schema()); }

  std::string InitialOffset() { return feed_.InitialOffset().ToJson(); }

  std::optional<std::string> MaxOffset() { return JsonOf(feed_.MaxOffset()); }

  std::string LatestOffset(const std::string& start, std::optional<std::int64_t> max_commits,
                           const std::optional<std::string>& target) {
    std::optional<Lsn> target_lsn;
    if (target) target_lsn = Offset::FromJson(*target).lsn;
    return feed_.LatestOffset(Offset::FromJson(start), max_commits, target_lsn).ToJson();
  }

  std::optional<std::pair<std::string, std::string>> SkippedRange(const std::string& start) {
    auto purged = feed_.Purged(Offset::FromJson(start));
    if (!purged) return std::nullopt;
    return std::pair{purged->first_lost.ToString(), purged->retention.min_lsn.ToString()};
  }

  // (from LSN, to LSN, capture instance) per range.
  std::vector<std::tuple<std::string, std::string, std::string>> Partitions(const std::string& start,
                                                                            const std::string& end) {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const LsnRange& range : feed_.Partitions(Offset::FromJson(start), Offset::FromJson(end))) {
      out.emplace_back(range.from.ToString(), range.to.ToString(), range.capture_instance);
    }
    return out;
  }

  std::string SchemaEvents(const std::string& start, const std::string& end) {
    return SchemaEventsJson(feed_.SchemaEvents(Offset::FromJson(start), Offset::FromJson(end)));
  }

  std::string EmptyReadMetrics(const std::string& start, const std::string& end) {
    return RangeMeasuresToJson(feed_.MeasureEmptyRead(Offset::FromJson(start), Offset::FromJson(end)));
  }

  // The native `data_skipped` facts row of the batch (start, end] when cleanup purged changes
  // after start; None otherwise.
  nb::object SkippedFacts(const std::string& app_id, const std::string& target,
                          std::int64_t batch_id, const std::string& start,
                          const std::string& end) {
    BatchOffsets offsets{batch_id, Offset::FromJson(start), Offset::FromJson(end), std::nullopt,
                         std::nullopt};
    auto purged = feed_.Purged(offsets.start);
    if (!purged) return nb::none();
    offsets.read_from = purged->retention.min_lsn;
    FactsRow row = DataSkippedRow(app_id, target, offsets, /*certain=*/true,
                                  purged->retention.watermark_ts, "");
    row.written_at = NowUtc();
    return ToPyArrowBatch(FactsToRecordBatch({row}));
  }

 private:
  ChangeFeed feed_;
};

// One range's read: its record batches, then what the read measured (metrics_json).
class RangeRead {
 public:
  explicit RangeRead(std::shared_ptr<FeedRangeReader> reader)
      : reader_(reader), stream_(std::move(reader)) {}

  nb::object Next() { return stream_.Next(); }
  nb::object Schema() const { return stream_.Schema(); }
  nb::object ExportCapsule(nb::object requested_schema) {
    return stream_.ExportCapsule(std::move(requested_schema));
  }
  std::string MetricsJson() const { return RangeMeasuresToJson(reader_->measures()); }

 private:
  std::shared_ptr<FeedRangeReader> reader_;  // kept for its measures after the stream ends
  ArrowStream stream_;
};

RangeRead ReadRange(nb::handle options, const std::string& from_lsn, const std::string& to_lsn,
                    bool measure_end, const std::string& capture_instance,
                    const std::optional<std::string>& schema_json) {
  const SourceOptions parsed = ParseSourceOptions(options);
  const Lsn from = Lsn::ParseLenient(from_lsn);
  const Lsn to = Lsn::ParseLenient(to_lsn);
  const FeedRangeShape shape{capture_instance, SchemaOfJson(schema_json)};
  std::shared_ptr<FeedRangeReader> reader;
  {
    nb::gil_scoped_release release;
    reader = ReadFeedRange(parsed, from, to, measure_end, nullptr, shape);
  }
  return RangeRead(std::move(reader));
}

// Spark mode's bronze route (feed/bronze_range.h): a task's range written into bronze's files.
std::string WriteRangeToBronzeJson(nb::handle options, const std::string& from_lsn,
                                   const std::string& to_lsn, bool measure_end,
                                   const std::string& capture_instance,
                                   const std::optional<std::string>& schema_json,
                                   const std::string& bronze_uri, std::int64_t batch_id,
                                   std::size_t part) {
  const SourceOptions parsed = ParseSourceOptions(options);
  const Lsn from = Lsn::ParseLenient(from_lsn);
  const Lsn to = Lsn::ParseLenient(to_lsn);
  const FeedRangeShape shape{capture_instance, SchemaOfJson(schema_json)};
  nb::gil_scoped_release release;
  return WriteRangeToBronze(parsed, from, to, measure_end, shape, {bronze_uri, batch_id, part})
      .ToJson();
}

std::vector<BronzeRangeFiles> RangesOf(const std::vector<std::string>& documents) {
  std::vector<BronzeRangeFiles> ranges;
  for (const auto& text : documents) ranges.push_back(BronzeRangeFiles::FromJson(text, "a range's bronze files"));
  return ranges;
}

// (stats dict as batch_facts takes it, [range metrics JSON]) of a batch's ranges.
nb::tuple BronzeRangesSummary(const std::vector<std::string>& documents) {
  const std::vector<BronzeRangeFiles> ranges = RangesOf(documents);
  const RowStats stats = SumRowStats(ranges);
  nb::dict out;
  out["rows"] = stats.rows;
  out["deletes"] = stats.deletes;
  out["inserts"] = stats.inserts;
  out["updates"] = stats.updates;
  out["min_lsn"] = stats.min_lsn ? nb::cast(*stats.min_lsn) : nb::none();
  out["max_lsn"] = stats.max_lsn ? nb::cast(*stats.max_lsn) : nb::none();
  out["min_commit_ts_us"] = stats.min_commit_ts ? nb::cast(stats.min_commit_ts->value) : nb::none();
  out["max_commit_ts_us"] = stats.max_commit_ts ? nb::cast(stats.max_commit_ts->value) : nb::none();
  std::vector<std::string> measures;
  for (const auto& range : ranges) measures.push_back(RangeMeasuresToJson(range.measures));
  return nb::make_tuple(out, measures);
}

nb::dict CommitBronzeRangesDict(const std::string& bronze_uri,
                                const std::vector<std::string>& documents,
                                const std::string& app_id, std::int64_t batch_id,
                                const std::string& user_metadata) {
  const std::vector<BronzeRangeFiles> ranges = RangesOf(documents);
  delta::CommitResult result;
  {
    nb::gil_scoped_release release;
    result = CommitBronzeRanges(bronze_uri, ranges, delta::Txn{app_id, batch_id, std::nullopt},
                                user_metadata);
  }
  nb::dict out;
  out["version"] = result.version;
  out["written"] = result.written;
  out["rows"] = result.rows;
  out["files"] = result.files;
  return out;
}

std::string Bootstrap(nb::handle options, const std::string& target, const std::string& app_id,
                      const std::string& state_dir, const std::optional<std::string>& facts_table) {
  SourceOptions parsed = ParseSourceOptions(options);
  nb::gil_scoped_release release;
  ChangeFeed feed(std::move(parsed));
  return feed.Bootstrap({target, app_id, state_dir, facts_table}).ToJson();
}

// BootstrapTables whose writes a Python object makes (mssql_cdc.bootstrap's tables named in a
// catalog): holds_snapshot(lsn) -> bool, find_snapshot(instances) -> (lsn, chunked) | None,
// append_snapshot(plan_json, txn_app_id, txn_version, user_metadata) (SnapshotPlanJson),
// snapshot_rows(lsn) -> int, append_facts(batch, txn_app_id, txn_version).
std::string SnapshotPlanJson(const ParallelSnapshotRequest& request) {
  std::vector<PlannedRange> ranges;
  for (const auto& range : request.plan.ranges) ranges.push_back({range.lo, range.hi});
  nlohmann::json plan = ReadPlanJson(request.snapshot_lsn, request.plan.key_columns, ranges);
  plan["capture_instance"] = request.capture_instance;  // the newest instance (SnapshotInstance)
  return plan.dump();
}

class PythonBootstrapTables final : public BootstrapTables {
 public:
  PythonBootstrapTables(nb::object tables, bool has_facts)
      : tables_(std::move(tables)), has_facts_(has_facts) {}

  bool HoldsSnapshot(const delta::Txn&, const Lsn& lsn) override {
    nb::gil_scoped_acquire gil;
    return nb::cast<bool>(tables_.attr("holds_snapshot")(lsn.ToString()));
  }
  bool AppendSnapshot(ParallelSnapshot& snapshot, const delta::Txn& txn,
                      const std::string& user_metadata,
                      const std::function<void(const std::string&)>&) override {
    // Spark's tasks read the planned ranges (format("mssql_cdc_snapshot")), so that the rows
    // never gather on the driver.
    const std::string plan = SnapshotPlanJson(snapshot.request());
    nb::gil_scoped_acquire gil;
    tables_.attr("append_snapshot")(plan, txn.app_id, txn.version, user_metadata);
    return false;  // Delta skips a txn it holds without saying so: count the rows
  }
  std::optional<FoundSnapshot> FindSnapshot(const std::vector<std::string>& instances) override {
    nb::gil_scoped_acquire gil;
    return FindSnapshotThrough(tables_, instances);
  }
  std::int64_t SnapshotRows(const Lsn& lsn) override {
    nb::gil_scoped_acquire gil;
    return nb::cast<std::int64_t>(tables_.attr("snapshot_rows")(lsn.ToString()));
  }
  bool has_facts() const override { return has_facts_; }
  void AppendFacts(const std::shared_ptr<arrow::RecordBatch>& row, const delta::Txn& txn) override {
    nb::gil_scoped_acquire gil;
    tables_.attr("append_facts")(ToPyArrowBatch(row), txn.app_id, txn.version);
  }

 private:
  nb::object tables_;
  bool has_facts_;
};

std::string BootstrapInto(nb::handle options, nb::object tables, const std::string& target,
                          const std::string& app_id, const std::string& state_dir,
                          const std::optional<std::string>& facts_table,
                          const std::optional<std::string>& resnapshot) {
  SourceOptions parsed = ParseSourceOptions(options);
  PythonBootstrapTables writer(std::move(tables), facts_table.has_value());
  FeedBootstrapRequest request{target, app_id, state_dir, facts_table};
  if (resnapshot) SetResnapshot(request, *resnapshot);
  nb::gil_scoped_release release;
  ChangeFeed feed(std::move(parsed));
  return feed.Bootstrap(request, writer).ToJson();
}

}  // namespace

void BindFeed(nb::module_& m) {
  nb::class_<PyFeed>(m, "Feed",
                     "The driver side of Spark mode for one capture instance: where the stream "
                     "starts, where each batch ends, the retention check and the split into "
                     "commit-aligned ranges, decided as a native stream decides them. Holds "
                     "one source connection; not thread-safe.")
      .def(nb::init<nb::handle, const std::optional<std::string>&>(), nb::arg("options"),
           nb::arg("query_schema") = nb::none(),
           "query_schema: the StructType JSON a running query was told; the feed reads and "
           "judges schema changes with it rather than inferring the table's columns again.")
      .def_prop_ro("capture_instance", &PyFeed::CaptureInstance)
      .def("table_instances", &PyFeed::TableInstances,
           "The capture instances of the instance's table, the instance first.")
      .def("index_columns", &PyFeed::IndexColumns,
           "The key columns of the instance's unique index (empty without one).")
      .def("spark_schema_json", &PyFeed::SparkSchemaJson,
           "The output schema as Spark StructType JSON.")
      .def("initial_offset", &PyFeed::InitialOffset,
           "Offset JSON of the position before the first change to read (startingLsn).")
      .def("max_offset", &PyFeed::MaxOffset,
           "Offset JSON of the max LSN; None while lsn_time_mapping is empty.")
      .def("latest_offset", &PyFeed::LatestOffset, nb::arg("start"),
           nb::arg("max_commits") = nb::none(), nb::arg("target") = nb::none(),
           "Offset JSON of the end of the batch after `start` (up to the `target` offset, else "
           "the max LSN; at most max_commits commits); `start` when nothing is new. Raises "
           "DataLossError when cleanup purged changes after start and failOnDataLoss is on.")
      .def("skipped_range", &PyFeed::SkippedRange, nb::arg("start"),
           "(first_lost_lsn, min_lsn) when cleanup purged changes after `start`, else None.")
      .def("partitions", &PyFeed::Partitions, nb::arg("start"), nb::arg("end"),
           "Commit-aligned (from_lsn, to_lsn, capture_instance) ranges of (start, end], each "
           "read from the capture instance serving it, at most numPartitions per instance.")
      .def("schema_events", &PyFeed::SchemaEvents, nb::arg("start"), nb::arg("end"),
           "JSON list of the batch's schema events ({event, lsn, detail, commit_ts}): its DDL "
           "and the newer capture instances it starts reading; warnings are logged.")
      .def("empty_read_metrics", &PyFeed::EmptyReadMetrics, nb::arg("start"), nb::arg("end"),
           "The metrics JSON of a batch that partitions() splits into no range: nothing read, "
           "the batch's end measured now.")
      .def("skipped_facts", &PyFeed::SkippedFacts, nb::arg("app_id"), nb::arg("target"),
           nb::arg("batch_id"), nb::arg("start"), nb::arg("end"),
           "The native data_skipped facts row (a pyarrow.RecordBatch in the facts schema) of "
           "the batch (start, end] when cleanup purged changes after start, else None.");

  nb::class_<RangeRead>(m, "RangeRead",
                        "One range's read, once: iterate it for pyarrow.RecordBatch objects "
                        "(failures raise the engine's error classes) or hand it to "
                        "pyarrow.RecordBatchReader.from_stream(); metrics_json() then says what "
                        "the read measured.")
      .def("__arrow_c_stream__", &RangeRead::ExportCapsule,
           nb::arg("requested_schema") = nb::none())
      .def_prop_ro("schema", &RangeRead::Schema, "The stream's schema as a pyarrow.Schema.")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &RangeRead::Next)
      .def("metrics_json", &RangeRead::MetricsJson,
           "The range's measures as JSON (rows, bytes, read_seconds, round_trip_ms, and with "
           "measure_end the batch's end measures); complete once iterated to the end.");
  m.def("write_range_to_bronze", &WriteRangeToBronzeJson, nb::arg("options"), nb::arg("from_lsn"),
        nb::arg("to_lsn"), nb::kw_only(), nb::arg("measure_end") = false,
        nb::arg("capture_instance") = "", nb::arg("schema") = nb::none(), nb::arg("bronze_uri"),
        nb::arg("batch_id"), nb::arg("part") = 0,
        "Reads the range as read_range does and writes its rows into new, uncommitted data files "
        "of the bronze table at bronze_uri (rows stamped _batch_id = batch_id). Returns the "
        "range's document (JSON): its files, their schema, its rows' counts and its measures.");
  m.def("bronze_ranges_summary", &BronzeRangesSummary, nb::arg("documents"),
        "(stats dict as batch_facts takes it, [range metrics JSON]) of a batch's range documents.");
  m.def("commit_bronze_ranges", &CommitBronzeRangesDict, nb::arg("bronze_uri"), nb::arg("documents"),
        nb::arg("app_id"), nb::arg("batch_id"), nb::arg("user_metadata"),
        "Names the files of every range document in one bronze commit with txn (app_id, batch_id); "
        "written=False, the files deleted, when bronze holds the txn. Returns dict(version, "
        "written, rows, files).");
  m.def("read_range", &ReadRange, nb::arg("options"), nb::arg("from_lsn"), nb::arg("to_lsn"),
        nb::arg("measure_end") = false, nb::arg("capture_instance") = "",
        nb::arg("schema") = nb::none(),
        "The change rows of [from_lsn, to_lsn] of `capture_instance` (the options' when empty) "
        "in the output schema (`schema`, StructType JSON, when given), as a RangeRead, in "
        "batches of arrowBatchSize rows. After the last batch retention is checked again: "
        "changes purged during the read fail the next read with DataLossError when "
        "failOnDataLoss is on. measure_end: the batch's last range also measures the batch's "
        "end (retention watermark, newest commit, capture lag).");
  m.def(
      "schema_event_facts",
      [](const std::string& app_id, const std::string& target, std::int64_t batch_id,
         const std::string& events_json) -> nb::object {
        std::vector<FactsRow> rows;
        for (const auto& event : SchemaEventsFromJson(events_json)) {
          rows.push_back(SchemaEventRow(app_id, target, batch_id, event));
          rows.back().written_at = NowUtc();
        }
        if (rows.empty()) return nb::none();
        return ToPyArrowBatch(FactsToRecordBatch(rows));
      },
      nb::arg("app_id"), nb::arg("target"), nb::arg("batch_id"), nb::arg("events_json"),
      "The facts rows (a pyarrow.RecordBatch in the facts schema) of a batch's schema events "
      "as Feed.schema_events gave them; None when there are none.");
  m.def("bootstrap", &Bootstrap, nb::arg("options"), nb::arg("target"), nb::arg("app_id"),
        nb::arg("state_dir"), nb::arg("facts_table") = nb::none(),
        "The native bootstrap into bronze `target`, its snapshot state kept in `state_dir`; "
        "returns the offset JSON the stream starts after.");
  m.def("bootstrap_into", &BootstrapInto, nb::arg("options"), nb::arg("tables"), nb::arg("target"),
        nb::arg("app_id"), nb::arg("state_dir"), nb::arg("facts_table") = nb::none(),
        nb::arg("resnapshot") = nb::none(),
        "The native bootstrap, its writes made by `tables` (holds_snapshot, append_snapshot, "
        "snapshot_rows, append_facts), its snapshot state kept in `state_dir`; returns the "
        "offset JSON the stream starts after.");
  m.def("native_checkpoint_offset",
        [](const std::string& checkpoint) {
          nb::gil_scoped_release release;
          return JsonOf(NativeHandoverOffset(checkpoint));
        },
        nb::arg("checkpoint"),
        "Offset JSON of where a native stream's checkpoint stands (the end of its last batch "
        "in bronze, else its start); None when it has no start yet.");
  m.def("expand_template",
        [](const std::string& pattern, const std::string& capture_instance,
           const std::string& parameter) {
          return ExpandTemplate(pattern, parameter, capture_instance);
        },
        nb::arg("template"), nb::arg("capture_instance"), nb::arg("parameter"),
        "`template` with {ci} replaced by the capture instance; ConfigError naming `parameter` "
        "when it has no {ci}.");
}

}  // namespace mssql_cdc::python
