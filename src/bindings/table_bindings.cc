// Python access to the engine's table definitions (engine/table_schemas.h) and facts rows
// (engine/facts.h) for Spark mode, where Spark's Delta writer appends the rows: the schemas
// as Spark StructType JSON, the tables created as a native stream creates them, and the facts
// row and bronze userMetadata of a micro-batch built as a native stream builds them.
#include <arrow/type.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/lsn.h"
#include "core/offset.h"
#include "core/sql_type.h"
#include "core/table_ref.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "engine/batch_agreement.h"
#include "engine/batch_measures.h"
#include "engine/batch_reader.h"
#include "engine/facts.h"
#include "engine/finalization.h"
#include "engine/stream_batch.h"
#include "engine/table_schemas.h"
#include "reconcile/reconcile_report.h"
#include "silver/silver_schema.h"
#include "source/output_schema.h"
#include "bindings/arrow_stream.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

std::shared_ptr<arrow::Schema> OutputSchemaOf(const std::string& output_schema_json) {
  return delta::FromDeltaSchemaString(output_schema_json, "the output schema JSON");
}

std::optional<UtcMicros> MicrosOf(const std::optional<std::int64_t>& micros) {
  return micros ? std::optional<UtcMicros>(UtcMicros{*micros}) : std::nullopt;
}

std::optional<std::string> LsnTextOf(const std::optional<std::string>& text) {
  return text ? std::optional<std::string>(Lsn::Parse(*text).ToString()) : std::nullopt;
}

// A stats dict of the batch's rows as RowStats: rows (required), deletes, inserts, updates
// (0 when absent), min_lsn, max_lsn, min_commit_ts_us, max_commit_ts_us (None when absent).
RowStats RowStatsOf(nb::handle stats) {
  if (!nb::isinstance<nb::dict>(stats)) throw ConfigError("stats must be a dict");
  RowStats out;
  bool has_rows = false;
  for (auto [key, value] : nb::borrow<nb::dict>(stats)) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    auto count = [&] { return nb::cast<std::int64_t>(value); };
    auto optional_text = [&]() -> std::optional<std::string> {
      if (value.is_none()) return std::nullopt;
      return nb::cast<std::string>(value);
    };
    auto optional_micros = [&]() -> std::optional<UtcMicros> {
      if (value.is_none()) return std::nullopt;
      return UtcMicros{nb::cast<std::int64_t>(value)};
    };
    if (name == "rows") {
      out.rows = count();
      has_rows = true;
    } else if (name == "deletes") {
      out.deletes = count();
    } else if (name == "inserts") {
      out.inserts = count();
    } else if (name == "updates") {
      out.updates = count();
    } else if (name == "min_lsn") {
      out.min_lsn = LsnTextOf(optional_text());
    } else if (name == "max_lsn") {
      out.max_lsn = LsnTextOf(optional_text());
    } else if (name == "min_commit_ts_us") {
      out.min_commit_ts = optional_micros();
    } else if (name == "max_commit_ts_us") {
      out.max_commit_ts = optional_micros();
    } else {
      throw ConfigError("stats has no key '" + name + "': the keys are rows, deletes, inserts, "
                        "updates, min_lsn, max_lsn, min_commit_ts_us, max_commit_ts_us");
    }
  }
  if (!has_rows) throw ConfigError("stats needs 'rows': the change rows the batch wrote");
  return out;
}

// An event's detail as the facts table keeps it: a dict as compact JSON with sorted keys (as
// the native engine writes its details), a str as it is.
std::optional<std::string> DetailText(nb::handle detail) {
  if (detail.is_none()) return std::nullopt;
  if (nb::isinstance<nb::str>(detail)) return nb::cast<std::string>(detail);
  using namespace nb::literals;
  nb::object dumps = nb::module_::import_("json").attr("dumps");
  return nb::cast<std::string>(dumps(detail, "separators"_a = nb::make_tuple(",", ":"),
                                     "sort_keys"_a = true, "ensure_ascii"_a = false));
}

void SetEnd(FactsRow& row, const std::optional<std::string>& end) {
  if (!end) return;
  const Offset offset = Offset::FromJson(*end);
  row.end_lsn = offset.lsn.ToString();
  row.end_commit_ts = offset.commit_ts;
}

// The measures among `metrics` (RangeMeasures JSON documents) of ranges inside (start, end].
// Metrics are best effort: a document that does not parse is skipped with a warning.
std::vector<RangeMeasures> BatchRanges(const std::vector<std::string>& metrics,
                                       const std::optional<std::string>& start,
                                       const std::optional<std::string>& end) {
  std::vector<RangeMeasures> ranges;
  if (!end) return ranges;
  const Lsn end_lsn = Offset::FromJson(*end).lsn;
  const std::optional<Lsn> start_lsn =
      start ? std::optional(Offset::FromJson(*start).lsn) : std::nullopt;
  for (const auto& text : metrics) {
    RangeMeasures range;
    try {
      range = RangeMeasuresFromJson(text, "a metrics file of the batch");
    } catch (const ConfigError& e) {
      spdlog::warn("{}; its measures are left out of the facts row", e.what());
      continue;
    }
    if (range.to <= end_lsn && (!start_lsn || range.from > *start_lsn)) ranges.push_back(range);
  }
  return ranges;
}

nb::tuple BatchFacts(const std::string& app_id, std::int64_t batch_id, const std::string& target,
                     nb::handle stats, const std::optional<std::string>& start,
                     const std::optional<std::string>& end, std::int64_t started_at_us,
                     std::int64_t duration_ms, const std::vector<std::string>& metrics) {
  // A sink called by hand may not know the batch's offsets: the end fields stay NULL then.
  FactsRow row;
  row.app_id = app_id;
  row.batch_id = batch_id;
  row.started_at = UtcMicros{started_at_us};
  row.target = target;
  FillRowStats(row, RowStatsOf(stats));
  SetEnd(row, end);
  const std::vector<RangeMeasures> ranges = BatchRanges(metrics, start, end);
  if (!ranges.empty()) FoldMeasures(row, ranges, std::nullopt);
  row.duration_ms = duration_ms;
  row.written_at = NowUtc();
  const std::optional<std::string> start_lsn =
      start ? std::optional(Offset::FromJson(*start).lsn.ToString()) : std::nullopt;
  const std::string user_metadata = BatchUserMetadata(row, start_lsn);
  return nb::make_tuple(ToPyArrowBatch(FactsToRecordBatch({row})), user_metadata, !ranges.empty());
}

nb::object EventFacts(const std::string& app_id, const std::string& target,
                      const std::string& event, nb::handle detail,
                      std::optional<std::int64_t> batch_id, std::optional<std::int64_t> rows,
                      const std::optional<std::string>& min_lsn,
                      const std::optional<std::string>& max_lsn,
                      std::optional<std::int64_t> min_commit_ts_us,
                      std::optional<std::int64_t> max_commit_ts_us,
                      std::optional<std::int64_t> lost_from_ts_us,
                      std::optional<std::int64_t> lost_to_ts_us,
                      const std::optional<std::string>& end,
                      std::optional<std::int64_t> started_at_us,
                      std::optional<std::int64_t> duration_ms,
                      const std::optional<std::string>& end_lsn,
                      std::optional<std::int64_t> end_commit_ts_us) {
  if (event.empty()) throw ConfigError("event must name the kind of event, e.g. data_skipped");
  FactsRow row;
  row.app_id = app_id;
  row.target = target;
  row.event = event;
  row.detail = DetailText(detail);
  row.batch_id = batch_id;
  row.rows = rows;
  row.min_lsn = LsnTextOf(min_lsn);
  row.max_lsn = LsnTextOf(max_lsn);
  row.min_commit_ts = MicrosOf(min_commit_ts_us);
  row.max_commit_ts = MicrosOf(max_commit_ts_us);
  row.lost_from_ts = MicrosOf(lost_from_ts_us);
  row.lost_to_ts = MicrosOf(lost_to_ts_us);
  SetEnd(row, end);
  if (!end && end_lsn) {
    row.end_lsn = LsnTextOf(end_lsn);
    row.end_commit_ts = MicrosOf(end_commit_ts_us);
  }
  row.started_at = MicrosOf(started_at_us);
  row.duration_ms = duration_ms;
  row.written_at = NowUtc();
  return ToPyArrowBatch(FactsToRecordBatch({row}));
}

// The create options of a table kind; bronze's and silver's with the library's columns only.
delta::CreateOptions DefinitionOf(const std::string& kind) {
  if (kind == "facts") return FactsTableOptions();
  if (kind == "control") return ControlTableOptions();
  if (kind == "plans") return PlansTableOptions();
  if (kind == "reconcile") return ReportTableOptions();
  if (kind == "bronze") {
    return BronzeTableOptions(OutputSchema(arrow::FieldVector{}, /*include_command_id=*/true), "");
  }
  if (kind == "silver") {
    // The columns silver adds to the captured ones, and its comment without a bronze name.
    const auto bronze = BronzeSchema(OutputSchema(arrow::FieldVector{}, /*include_command_id=*/true));
    return SilverTableOptions(*bronze, "", "");
  }
  throw ConfigError("no table kind '" + kind + "': facts, control, plans, bronze, silver or reconcile");
}

std::string KnownSchemaVersion(const std::string& kind) {
  return DefinitionOf(kind).properties.at(kSchemaVersionProperty);
}

}  // namespace

void BindTables(nb::module_& m) {
  m.attr("SCHEMA_VERSION_PROPERTY") = kSchemaVersionProperty;
  m.attr("MIN_VERSION_PROPERTY") = kMinVersionProperty;
  m.def("schema_version", &KnownSchemaVersion, nb::arg("kind"),
        "The mssql_cdc.schema_version a table of `kind` (facts, control, plans, bronze, silver, "
        "reconcile) is created with.");
  m.def("check_schema_version",
        [](const delta::StringMap& properties, const std::string& kind, const std::string& where) {
          CheckSchemaVersion(properties, std::stoi(KnownSchemaVersion(kind)), kind + " table", where);
        },
        nb::arg("properties"), nb::arg("kind"), nb::arg("where"),
        "ConfigError when a newer release migrated the table past what this one knows for "
        "`kind` (its mssql_cdc.schema_version or mssql_cdc.min_version above it).");
  m.def("table_definition",
        [](const std::string& kind) {
          const auto options = DefinitionOf(kind);
          std::vector<std::tuple<std::string, std::string, std::optional<std::string>>> columns;
          for (const auto& field : options.schema->fields()) {
            columns.emplace_back(field->name(), SparkTypeName(*field->type()), delta::FieldComment(*field));
          }
          return std::make_pair(columns, options.description);
        },
        nb::arg("kind"),
        "A table the engine writes, as it defines it: its columns as (name, Spark SQL type, "
        "comment) and its comment. kind is facts, control, plans, reconcile (the report) or "
        "bronze (the library's columns only, with a comment that names no capture instance).");
  m.def("bronze_schema_json",
        [](const std::string& output_schema_json) {
          return delta::ToDeltaSchemaString(*BronzeSchema(OutputSchemaOf(output_schema_json)));
        },
        nb::arg("output_schema_json"),
        "The bronze schema (output columns with comments, then _batch_id, _snapshot, _chunk) "
        "as Spark StructType JSON.");
  m.def("facts_schema_json", [] { return delta::ToDeltaSchemaString(*FactsSchema()); },
        "The facts table's schema as Spark StructType JSON.");
  m.def("control_schema_json", [] { return delta::ToDeltaSchemaString(*ControlSchema()); },
        "The control table's schema as Spark StructType JSON.");
  m.def("report_schema_json", [] { return delta::ToDeltaSchemaString(*ReportSchema()); },
        "The reconcile report table's schema as Spark StructType JSON.");
  m.def("ensure_bronze",
        [](const std::string& uri, const std::string& output_schema_json,
           const std::optional<std::string>& capture_instance) {
          auto options = BronzeTableOptions(OutputSchemaOf(output_schema_json),
                                            capture_instance.value_or(""));
          TableRef::RequirePath(uri, "target");
          nb::gil_scoped_release release;
          OpenOrCreateTable(uri, options);
        },
        nb::arg("uri"), nb::arg("output_schema_json"), nb::arg("capture_instance") = nb::none(),
        "Creates the bronze table when missing, as a native stream does (schema, comments, "
        "schema version; the table comment names capture_instance when given). An existing "
        "table is left as it is: appends with mergeSchema add new columns.");
  m.def("check_bronze",
        [](const std::string& uri, const std::string& output_schema_json) {
          TableRef::RequirePath(uri, "target");
          auto schema = BronzeSchema(OutputSchemaOf(output_schema_json));
          nb::gil_scoped_release release;
          CheckExistingBronze(uri, schema);
        },
        nb::arg("uri"), nb::arg("output_schema_json"),
        "Checks an existing bronze table at `uri` before anything is written: it must be a "
        "bronze table and take the output schema's rows (SchemaChangedError with the fix, e.g. "
        "the ALTER TABLE that enables column mapping). Nothing when there is no table.");
  m.def("ensure_facts",
        [](const std::string& uri) {
          TableRef::RequirePath(uri, "facts_table");
          nb::gil_scoped_release release;
          OpenOrCreateTable(uri, FactsTableOptions());
        },
        nb::arg("uri"), "Creates the facts table when missing, as a native stream does.");
  m.def("ensure_control",
        [](const std::string& uri) {
          TableRef::RequirePath(uri, "control_table");
          nb::gil_scoped_release release;
          EnsureControlTable(uri);
        },
        nb::arg("uri"),
        "Creates the control table when missing; ConfigError when `uri` holds another table.");
  m.def("batch_facts", &BatchFacts, nb::arg("app_id"), nb::arg("batch_id"), nb::arg("target"),
        nb::arg("stats"), nb::arg("start").none(), nb::arg("end").none(), nb::arg("started_at_us"),
        nb::arg("duration_ms"), nb::arg("metrics") = std::vector<std::string>(),
        "(facts row as a pyarrow.RecordBatch, bronze commit userMetadata JSON, measured) of "
        "one micro-batch, as a native stream writes them. stats: rows, deletes, inserts, "
        "updates, min_lsn, max_lsn, min_commit_ts_us, max_commit_ts_us. metrics: the range "
        "metrics JSON documents the reader wrote; those of ranges inside (start, end] fill the "
        "measured columns (read time and MB, round trip, retention, lags), which stay NULL "
        "without them, and `measured` says whether any did.");
  m.def("row_stats_aggregates", &RowStatsAggregates,
        "The Spark SQL aggregate expressions of batch_facts' stats (rows, min_lsn, max_lsn, "
        "min_commit_ts, max_commit_ts, deletes, inserts, updates) over a batch's rows: the "
        "counts the engine takes of its own batches.");
  m.def("check_facts_agree",
        [](const std::vector<std::pair<std::int64_t, std::optional<std::string>>>& recorded,
           const std::string& app_id, const std::string& facts_table, std::int64_t batch_id,
           const std::optional<std::string>& start, const std::optional<std::string>& end) {
          std::vector<FactsBatchRow> rows;
          for (const auto& [id, end_lsn] : recorded) rows.push_back({id, end_lsn});
          const auto lsn_of = [](const std::optional<std::string>& offset) {
            return offset ? std::optional(Offset::FromJson(*offset).lsn) : std::nullopt;
          };
          CheckFactsAgree(rows, app_id, facts_table, batch_id, lsn_of(start), lsn_of(end));
        },
        nb::arg("recorded"), nb::arg("app_id"), nb::arg("facts_table"), nb::arg("batch_id"),
        nb::arg("start").none(), nb::arg("end").none(),
        "ConfigError when the facts table's micro-batch rows of app_id, as (batch_id, end_lsn), "
        "disagree with batch `batch_id` reading (start, end] (offset JSON, None when unknown): "
        "the query's checkpoint was rewound, deleted or copied (engine/batch_agreement.h).");
  m.def("event_facts", &EventFacts, nb::arg("app_id"), nb::arg("target"), nb::arg("event"),
        nb::arg("detail") = nb::none(), nb::kw_only(), nb::arg("batch_id") = nb::none(),
        nb::arg("rows") = nb::none(), nb::arg("min_lsn") = nb::none(),
        nb::arg("max_lsn") = nb::none(), nb::arg("min_commit_ts_us") = nb::none(),
        nb::arg("max_commit_ts_us") = nb::none(), nb::arg("lost_from_ts_us") = nb::none(),
        nb::arg("lost_to_ts_us") = nb::none(), nb::arg("end") = nb::none(),
        nb::arg("started_at_us") = nb::none(), nb::arg("duration_ms") = nb::none(),
        nb::arg("end_lsn") = nb::none(), nb::arg("end_commit_ts_us") = nb::none(),
        "The facts row of an event (a pyarrow.RecordBatch in the facts schema); detail is a "
        "dict (kept as JSON) or str; `end` an offset JSON, or else end_lsn and end_commit_ts_us.");
}

}  // namespace mssql_cdc::python
