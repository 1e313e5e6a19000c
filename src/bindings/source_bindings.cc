// Python access to a Source: metadata calls and change reads handed to pyarrow through the
// Arrow C stream interface (zero copy: pyarrow.RecordBatchReader.from_stream(reader)).
#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "core/errors.h"
#include "core/int128.h"
#include "core/facts_events.h"
#include "core/operations.h"
#include "core/source_options.h"
#include "core/sql_type.h"
#include "core/timezone.h"
#include "bindings/arrow_stream.h"
#include "bindings/source_options.h"
#include "snapshot/chunk_plan.h"
#include "source/odbc/bundled_driver.h"
#include "source/open_source.h"
#include "source/sim/sim_source.h"
#include "source/output_schema.h"
#include "source/source.h"
#include "source/key_extent.h"
#include "source/source_clock.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

class PySource {
 public:
  PySource(std::unique_ptr<Source> source, const std::string& source_time_zone)
      : source_(std::move(source)),
        configured_zone_(source_time_zone),
        clock_(ResolveSourceClock(*source_, source_time_zone)) {}

  // Reads the clock again as the sourceTimeZone option says ("auto" asks the server again).
  void RefreshClock() { clock_ = ResolveSourceClock(*source_, configured_zone_); }

  // A Windows zone name (or "auto"), else a fixed offset in minutes east of UTC; neither: as
  // configured.
  void SetClock(const std::optional<std::string>& zone, const std::optional<int>& offset_minutes) {
    if (zone) {
      clock_ = ResolveSourceClock(*source_, *zone);
    } else if (offset_minutes) {
      clock_ = SourceClock::FixedOffset(*offset_minutes);
    } else {
      RefreshClock();
    }
  }

  nb::list CaptureInstances() { return InstanceDicts(source_->ListCaptureInstances()); }

  nb::list TableInstances(const std::string& source_schema, const std::string& source_table) {
    return InstanceDicts(source_->ListTableInstances(source_schema, source_table));
  }

  nb::dict Resolve(const std::string& name) {
    return InstanceDict(source_->ResolveCaptureInstance(name));
  }

  nb::list CapturedColumns(const std::string& capture_instance) {
    nb::list out;
    for (const auto& c : source_->CapturedColumns(capture_instance)) {
      nb::dict d;
      d["column_name"] = c.name;
      d["column_ordinal"] = c.column_ordinal;
      d["column_id"] = c.column_id;
      d["data_type"] = c.type.ToString();
      out.append(d);
    }
    return out;
  }

  std::string MinLsn(const std::string& ci) { return source_->MinLsn(ci).ToString(); }

  std::optional<std::string> MaxLsn() {
    auto lsn = source_->MaxLsn();
    return lsn ? std::optional<std::string>(lsn->ToString()) : std::nullopt;
  }

  ArrowStream ReadChanges(const std::string& capture_instance, const std::string& from,
                          const std::string& to, std::vector<std::string> columns,
                          bool include_command_id, std::int64_t batch_rows) {
    ChangeReadRequest request;
    request.capture_instance = source_->ResolveCaptureInstance(capture_instance).name;
    request.from = Lsn::ParseLenient(from);
    request.to = Lsn::ParseLenient(to);
    request.columns = std::move(columns);
    request.include_command_id = include_command_id;
    request.batch_rows = batch_rows;
    std::shared_ptr<arrow::RecordBatchReader> reader = source_->ReadChanges(request, clock_);
    return ArrowStream(std::move(reader));
  }

  // (ddl_lsn, ddl_time as UTC "YYYY-MM-DDTHH:MM:SS.mmm", ddl_command), in LSN order.
  std::vector<std::tuple<std::string, std::string, std::string>> DdlHistory(const std::string& ci) {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const auto& event : source_->DdlHistory(source_->ResolveCaptureInstance(ci).name)) {
      out.emplace_back(event.ddl_lsn.ToString(), UtcText(event.ddl_time), event.ddl_command);
    }
    return out;
  }

  std::optional<std::string> NthCommitAfter(const std::string& after, std::int64_t n) {
    if (n < 1) throw ConfigError("n must be >= 1, got " + std::to_string(n));
    auto lsn = source_->NthCommitAfter(Lsn::ParseLenient(after), n);
    return lsn ? std::optional<std::string>(lsn->ToString()) : std::nullopt;
  }

  // The last commit at or before a UTC instant (microseconds since the epoch), read on the
  // server's clock as sys.fn_cdc_map_time_to_lsn reads it.
  std::optional<std::string> LastCommitAtOrBefore(std::int64_t utc_micros) {
    auto lsn = source_->LastCommitAtOrBefore(LocalSeekTime(clock_, UtcMicros{utc_micros}));
    return lsn ? std::optional<std::string>(lsn->ToString()) : std::nullopt;
  }

  // The commit time of the lsn_time_mapping entry at exactly `lsn`, in UTC.
  std::optional<std::string> CommitTime(const std::string& lsn) {
    auto time = UtcCommitTime(*source_, clock_, Lsn::ParseLenient(lsn));
    return time ? std::optional<std::string>(FormatIsoMillis(time->value)) : std::nullopt;
  }

  std::vector<std::tuple<std::string, std::string, std::int64_t>> SplitPoints(
      const std::string& ci, const std::string& from, const std::string& to, int n) {
    if (n < 1) throw ConfigError("n must be >= 1, got " + std::to_string(n));
    std::vector<std::tuple<std::string, std::string, std::int64_t>> out;
    for (const auto& point : source_->SplitPoints(source_->ResolveCaptureInstance(ci).name,
                                                  Lsn::ParseLenient(from), Lsn::ParseLenient(to), n)) {
      out.emplace_back(point.bound.ToString(), point.next.ToString(), point.rows);
    }
    return out;
  }

  // Current rows with lo <= key < hi (JSON bounds as snapshotChunks writes them; "null" for
  // an open end), stamped with the zero LSN.
  ArrowStream ReadSnapshot(const std::string& ci, std::vector<std::string> columns,
                           std::vector<std::string> key_columns, const std::string& lo,
                           const std::string& hi, std::int64_t batch_rows) {
    SnapshotReadRequest request;
    request.capture_instance = source_->ResolveCaptureInstance(ci).name;
    request.columns = std::move(columns);
    request.key_columns = std::move(key_columns);
    request.lo = nlohmann::json::parse(lo);
    request.hi = nlohmann::json::parse(hi);
    request.batch_rows = batch_rows;
    std::shared_ptr<arrow::RecordBatchReader> reader = source_->ReadSnapshot(request);
    return ArrowStream(std::move(reader));
  }

  // Key seeks; keys come and go as JSON text (a scalar for one column, a list for several).
  std::optional<std::string> KeyAt(const std::string& ci, std::vector<std::string> key_columns,
                                   const std::string& from, std::int64_t offset) {
    auto key = source_->KeyAt(KeyQueryOf(ci, std::move(key_columns)), nlohmann::json::parse(from), offset);
    return key ? std::optional<std::string>(key->dump()) : std::nullopt;
  }

  std::optional<std::string> LastKey(const std::string& ci, std::vector<std::string> key_columns) {
    auto key = source_->LastKey(KeyQueryOf(ci, std::move(key_columns)));
    return key ? std::optional<std::string>(key->dump()) : std::nullopt;
  }

  // (slice, rows, sum of keys as decimal text) per non-empty slice.
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> CountKeySlices(
      const std::string& ci, std::vector<std::string> key_columns, std::int64_t start,
      std::int64_t width, std::int64_t slices) {
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> out;
    for (const auto& slice : source_->CountKeySlices(KeyQueryOf(ci, std::move(key_columns)), start, width, slices)) {
      out.emplace_back(slice.slice, slice.rows, Int128Text(slice.key_sum));
    }
    return out;
  }

  // (MIN, MAX) of a one-column key within [lo, hi), as JSON text (source/key_extent.h).
  std::pair<std::string, std::string> KeyRange(const std::string& ci, const std::string& key,
                                               std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
    auto [min, max] = KeyRangeWithin(*source_, KeyQueryOf(ci, {key}), lo, hi);
    return {min.dump(), max.dump()};
  }

  // (bucket, rows, sum of keys as decimal text) per non-empty bucket (source/key_extent.h).
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> KeyBuckets(
      const std::string& ci, const std::string& key, std::int64_t width, std::optional<std::int64_t> lo,
      std::optional<std::int64_t> hi) {
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> out;
    for (const auto& bucket : mssql_cdc::KeyBuckets(*source_, KeyQueryOf(ci, {key}), width, lo, hi)) {
      out.emplace_back(bucket.slice, bucket.rows, Int128Text(bucket.key_sum));
    }
    return out;
  }

  // A chunked snapshot's extent, as JSON text (source/key_extent.h).
  std::string SnapshotExtentJson(const std::string& ci, std::vector<std::string> key_columns) {
    return mssql_cdc::SnapshotExtent(*source_, KeyQueryOf(ci, std::move(key_columns))).dump();
  }

  std::int64_t RowEstimate(const std::string& ci) {
    return source_->RowEstimate(source_->ResolveCaptureInstance(ci).name);
  }

  std::vector<std::string> TableColumns(const std::string& ci) {
    return source_->TableColumns(source_->ResolveCaptureInstance(ci).name);
  }

  // The chunks a chunked snapshot of the instance's table would read (snapshot/chunk_plan.h),
  // as (lo, hi) JSON bounds.
  std::vector<std::pair<std::string, std::string>> PlanChunks(const std::string& ci,
                                                              std::vector<std::string> key_columns,
                                                              std::int64_t chunk_rows,
                                                              std::optional<std::int64_t> rows_estimate) {
    ChunkPlanRequest request;
    request.instance = source_->ResolveCaptureInstance(ci);
    request.columns = source_->CapturedColumns(request.instance.name);
    request.key_columns = std::move(key_columns);
    request.chunk_rows = chunk_rows;
    request.rows_estimate = rows_estimate;
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& chunk : mssql_cdc::PlanChunks(request, *source_).chunks) {
      out.emplace_back(chunk.lo.dump(), chunk.hi.dump());
    }
    return out;
  }

  std::string ServerTimeZone() { return source_->ServerTimeZone(); }
  std::optional<double> RoundTripMs() { return source_->RoundTripMs(); }
  // Minutes east of UTC of the source clock now.
  int OffsetMinutes() const { return clock_.OffsetMinutesAt(NowUtc()); }
  std::string time_zone() const { return clock_.name(); }

 private:
  static nb::dict InstanceDict(const CaptureInstanceInfo& ci) {
    nb::dict d;
    d["capture_instance"] = ci.name;
    d["source_schema"] = ci.source_schema;
    d["source_table"] = ci.source_table;
    d["start_lsn"] = ci.start_lsn.ToString();
    d["index_columns"] = ci.index_columns;
    return d;
  }

  static nb::list InstanceDicts(const std::vector<CaptureInstanceInfo>& instances) {
    nb::list out;
    for (const auto& ci : instances) out.append(InstanceDict(ci));
    return out;
  }

  std::string UtcText(LocalMicros local) const { return FormatIsoMillis(clock_.ToUtc(local).value); }

  KeyQuery KeyQueryOf(const std::string& ci, std::vector<std::string> key_columns) {
    return KeyQuery{source_->ResolveCaptureInstance(ci).name, std::move(key_columns)};
  }

  std::unique_ptr<Source> source_;
  std::string configured_zone_;
  SourceClock clock_;
};

}  // namespace

void BindSource(nb::module_& m) {
  BindArrowStream(m);
  m.def("facts_events", [] {
    return std::vector<std::string>(facts_event::kAll.begin(), facts_event::kAll.end());
  }, "The kinds of facts rows other than micro-batches (the event column), as core/facts_events.h names them.");
  m.def("operations", [] {
    std::vector<std::pair<int, std::string>> out;
    for (const auto& [code, name] : kOperationNames) out.emplace_back(code, std::string(name));
    return out;
  }, "The _operation codes of change rows and their names (0: a snapshot row).");
  m.def("metadata_columns", [] {
    std::vector<std::pair<std::string, std::string>> columns;
    for (const auto& field : MetadataFields(/*include_command_id=*/true)) {
      columns.emplace_back(field->name(), SparkTypeName(*field->type()));
    }
    return columns;
  }, "The metadata columns of change rows, in order, with their Spark SQL types (with _command_id).");
  m.def("reserved_column_names", [] {
    const auto& names = ReservedColumnNames();
    return std::vector<std::string>(names.begin(), names.end());
  }, "The column names no source column may have: the metadata columns and bronze's own.");
  m.def("schema_change_policies", [] {
    return std::vector<std::string>{std::string(SchemaChangePolicyName(SchemaChangePolicy::kClassify)),
                                    std::string(SchemaChangePolicyName(SchemaChangePolicy::kFail))};
  }, "The values of the schemaChangePolicy option.");
  m.def("isolation_levels", [] {
    std::vector<std::pair<std::string, std::optional<std::string>>> levels;
    for (IsolationLevel level : {IsolationLevel::kReadCommitted, IsolationLevel::kSnapshot}) {
      const auto asked = IsolationAsked(level);
      levels.emplace_back(std::string(IsolationLevelName(level)),
                          asked ? std::optional<std::string>(std::string(*asked)) : std::nullopt);
    }
    return levels;
  }, "The values of the isolationLevel option, as documented (matched in any case), each with "
     "the isolation a read at it asks SQL Server for (None: the connection's default).");
  m.def("use_bundled_odbc_driver",
        [](const std::string& libs_dir) { odbc::UseBundledDriverLibs(libs_dir); },
        nb::arg("libs_dir"),
        "Where mssql-python-odbc keeps Microsoft ODBC Driver 18 (its get_libs_dir()).");
  m.def("bundled_odbc_driver", [] { return odbc::BundledDriver18(); },
        "The Driver 18 library the engine uses when a connection string names no driver and "
        "unixODBC lists none; None when there is none for this machine.");

  nb::class_<PySource>(m, "Source", "A SQL Server CDC database read through the engine.")
      .def("capture_instances", &PySource::CaptureInstances)
      .def("captured_columns", &PySource::CapturedColumns, nb::arg("capture_instance"))
      .def("table_instances", &PySource::TableInstances, nb::arg("source_schema"), nb::arg("source_table"))
      .def("resolve", &PySource::Resolve, nb::arg("name"))
      .def("min_lsn", &PySource::MinLsn, nb::arg("capture_instance"))
      .def("max_lsn", &PySource::MaxLsn)
      .def("ddl_history", &PySource::DdlHistory, nb::arg("capture_instance"))
      .def("nth_commit_after", &PySource::NthCommitAfter, nb::arg("after"), nb::arg("n"))
      .def("last_commit_at_or_before", &PySource::LastCommitAtOrBefore, nb::arg("utc_micros"))
      .def("commit_time", &PySource::CommitTime, nb::arg("lsn"))
      .def("split_points", &PySource::SplitPoints, nb::arg("capture_instance"), nb::arg("from_lsn"),
           nb::arg("to_lsn"), nb::arg("n"))
      .def("read_snapshot", &PySource::ReadSnapshot, nb::arg("capture_instance"), nb::arg("columns"),
           nb::arg("key_columns"), nb::arg("lo"), nb::arg("hi"), nb::arg("batch_rows"))
      .def("key_at", &PySource::KeyAt, nb::arg("capture_instance"), nb::arg("key_columns"), nb::arg("from_key"),
           nb::arg("offset"))
      .def("last_key", &PySource::LastKey, nb::arg("capture_instance"), nb::arg("key_columns"))
      .def("count_key_slices", &PySource::CountKeySlices, nb::arg("capture_instance"), nb::arg("key_columns"),
           nb::arg("start"), nb::arg("width"), nb::arg("slices"))
      .def("row_estimate", &PySource::RowEstimate, nb::arg("capture_instance"))
      .def("key_range", &PySource::KeyRange, nb::arg("capture_instance"), nb::arg("key"), nb::arg("lo").none(),
           nb::arg("hi").none())
      .def("key_buckets", &PySource::KeyBuckets, nb::arg("capture_instance"), nb::arg("key"), nb::arg("width"),
           nb::arg("lo").none(), nb::arg("hi").none())
      .def("snapshot_extent", &PySource::SnapshotExtentJson, nb::arg("capture_instance"), nb::arg("key_columns"))
      .def("plan_chunks", &PySource::PlanChunks, nb::arg("capture_instance"), nb::arg("key_columns"),
           nb::arg("chunk_rows"), nb::arg("rows_estimate").none())
      .def("table_columns", &PySource::TableColumns, nb::arg("capture_instance"))
      .def("server_time_zone", &PySource::ServerTimeZone)
      .def("round_trip_ms", &PySource::RoundTripMs)
      .def("offset_minutes", &PySource::OffsetMinutes)
      .def("refresh_clock", &PySource::RefreshClock)
      .def("set_clock", &PySource::SetClock, nb::arg("zone").none(), nb::arg("offset_minutes").none())
      .def_prop_ro("time_zone", &PySource::time_zone)
      .def("read_changes", &PySource::ReadChanges, nb::arg("capture_instance"), nb::arg("from_lsn"),
           nb::arg("to_lsn"), nb::arg("columns") = std::vector<std::string>{},
           nb::arg("include_command_id") = true, nb::arg("batch_rows") = 10'000);

  m.def("open_source", [](nb::handle options) {
    const SourceOptions parsed =
        ParseSourceOptionsFor(options, SourceOptions::CaptureInstanceRule::kNotNeeded);
    return PySource(MakeSourceFactory(parsed)(), parsed.source_time_zone);
  }, nb::arg("options"),
  "Opens the database the source options name (captureInstance not needed), as the engine reads it.");
  m.def("open_sim_source", [](const std::string& path, const std::string& source_time_zone) {
    return PySource(OpenSimSource(path), source_time_zone);
  }, nb::arg("path"), nb::arg("source_time_zone") = "auto",
  "Opens a simulated database file (read-only).");
}

}  // namespace mssql_cdc::python
