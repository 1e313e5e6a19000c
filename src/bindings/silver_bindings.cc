// Python access to silver's rules (silver/, catalog/silver_sql.h) for apply_changes on Spark
// (python/mssql_cdc/silver.py): keys, the checks of an existing silver table, the plan of a
// call, the statements Spark runs, and silver's position in a control table at a path. JSON
// crosses for positions ({"applied_lsn", "snapshot_lsn", "open_snapshot_lsn",
// "snapshot_wave"}), verdicts ({"finalized_until", "end_lsn", "end_commit_ts"}, times
// "YYYY-MM-DDTHH:MM:SS.ffffff" naive UTC) and plans.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <arrow/api.h>

#include <nlohmann/json.hpp>

#include "catalog/reconcile_sql.h"
#include "catalog/silver_sql.h"
#include "catalog/table_sql.h"
#include "core/errors.h"
#include "core/options.h"
#include "core/table_ref.h"
#include "core/time.h"
#include "delta/schema.h"
#include "delta/table.h"
#include "engine/finalization.h"
#include "bindings/arrow_stream.h"
#include "bindings/events_json.h"
#include "bindings/position_json.h"
#include "silver/apply_plan.h"
#include "silver/silver_schema.h"
#include "silver/wave_ranges.h"
#include "snapshot/plans_table.h"

namespace nb = nanobind;
using nlohmann::json;

namespace mssql_cdc::python {
namespace {

std::shared_ptr<arrow::Schema> SchemaOf(const std::string& schema_json, const std::string& where) {
  return delta::FromDeltaSchemaString(schema_json, where);
}

UtcMicros TimeOf(const std::string& text) {
  auto micros = ParseDateTime(text);
  if (!micros) throw InternalError("not a time: " + text);
  return UtcMicros{*micros};
}

std::optional<Verdict> VerdictOf(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const json object = json::parse(*text);
  if (object.is_null() || !TextAt(object, "finalized_until")) return std::nullopt;
  Verdict verdict;
  verdict.finalized_until = TimeOf(*TextAt(object, "finalized_until"));
  verdict.end_lsn = TextAt(object, "end_lsn").value_or("");
  verdict.end_commit_ts = TimeOf(TextAt(object, "end_commit_ts").value_or(*TextAt(object, "finalized_until")));
  return verdict;
}

SilverApplyPlan PlanOf(const std::string& text) {
  const json object = json::parse(text);
  SilverApplyPlan plan;
  plan.rebuild = object.at("rebuild").get<bool>();
  plan.snapshot_lsn = TextAt(object, "snapshot_lsn");
  plan.after_lsn = TextAt(object, "after_lsn");
  plan.hold_verdict = object.at("hold_verdict").get<bool>();
  plan.open_snapshot_lsn = TextAt(object, "open_snapshot_lsn");
  plan.wave_chunks = object.at("wave_chunks").get<std::vector<int>>();
  if (!object.at("through_wave").is_null()) plan.through_wave = object.at("through_wave").get<std::int64_t>();
  plan.open_snapshot_app_id = object.value("open_snapshot_app_id", std::string());
  const json stamps = object.value("wave_stamps", json::object());
  for (const auto& [chunk, stamp] : stamps.items()) {
    plan.wave_stamps[std::stoi(chunk)] = stamp.get<std::string>();
  }
  return plan;
}

std::string PlanJson(const SilverApplyPlan& plan) {
  json object = {{"rebuild", plan.rebuild}, {"hold_verdict", plan.hold_verdict},
                 {"snapshot_lsn", nullptr}, {"after_lsn", nullptr}, {"open_snapshot_lsn", nullptr},
                 {"wave_chunks", plan.wave_chunks}, {"through_wave", nullptr}};
  if (plan.snapshot_lsn) object["snapshot_lsn"] = *plan.snapshot_lsn;
  if (plan.after_lsn) object["after_lsn"] = *plan.after_lsn;
  if (plan.open_snapshot_lsn) object["open_snapshot_lsn"] = *plan.open_snapshot_lsn;
  if (plan.through_wave) object["through_wave"] = *plan.through_wave;
  object["open_snapshot_app_id"] = plan.open_snapshot_app_id;
  object["range_deletes"] = WavesMayDeleteByRange(plan);  // read by the caller, not by PlanOf
  json stamps = json::object();
  for (const auto& [chunk, stamp] : plan.wave_stamps) stamps[std::to_string(chunk)] = stamp;
  object["wave_stamps"] = stamps;
  return object.dump();
}

// ALTER TABLE statements that add to silver the columns of bronze it lacks (NULL in old rows).
std::vector<std::string> AddedColumnsSql(const std::string& silver_sql, const arrow::Schema& silver_now,
                                         const arrow::Schema& bronze) {
  std::string added;
  const auto silver = SilverSchema(bronze);
  for (const auto& field : silver->fields()) {
    bool has = false;
    for (const auto& existing : silver_now.fields()) has |= AsciiLower(existing->name()) == AsciiLower(field->name());
    if (has) continue;
    if (!added.empty()) added += ", ";
    added += catalog::ColumnDefinitionSql(*field);
  }
  if (added.empty()) return {};
  return {"ALTER TABLE " + silver_sql + " ADD COLUMNS (" + added + ")"};
}

// A verdict as the JSON the Python package reads: times in microseconds, 'T'-separated.
std::string VerdictJson(const Verdict& verdict) {
  return json{{"finalized_until", FormatDateTime(verdict.finalized_until.value, 6, 'T')},
              {"end_lsn", verdict.end_lsn},
              {"end_commit_ts", FormatDateTime(verdict.end_commit_ts.value, 6, 'T')},
              {"updated_at", FormatDateTime(verdict.updated_at.value, 6, 'T')}}
      .dump();
}

}  // namespace

void BindSilver(nb::module_& m) {
  m.def("parse_granularity", [](const std::string& text) { ParseGranularity(text); }, nb::arg("text"),
        "ConfigError unless `text` is 'minute', 'hour' or 'day'.");
  m.def("silver_keys",
        [](const std::string& bronze_schema_json, const std::string& bronze_name, const std::vector<std::string>& keys) {
          return ResolveSilverKeys(keys, *SchemaOf(bronze_schema_json, bronze_name), bronze_name);
        },
        nb::arg("bronze_schema_json"), nb::arg("bronze_name"), nb::arg("keys"),
        "The keys in bronze's spelling; ConfigError for a key that is not a captured column.");
  m.def("check_silver",
        [](const std::string& silver_schema_json, const delta::StringMap& silver_properties,
           const std::string& silver_name, const std::string& bronze_schema_json, const std::string& bronze_name,
           const std::string& bronze_id, const std::vector<std::string>& keys) {
          CheckSilverOfBronze(*SchemaOf(silver_schema_json, silver_name), silver_properties, silver_name,
                              *SchemaOf(bronze_schema_json, bronze_name), bronze_name, bronze_id, keys);
        },
        nb::arg("silver_schema_json"), nb::arg("silver_properties"), nb::arg("silver_name"),
        nb::arg("bronze_schema_json"), nb::arg("bronze_name"), nb::arg("bronze_id"), nb::arg("keys"),
        "ConfigError when the existing table is not silver of this bronze.");
  m.def("check_silver_instances", &CheckSilverInstances, nb::arg("found"), nb::arg("allowed"),
        nb::arg("bronze_name"), "ConfigError when bronze holds rows of an instance not of the table.");
  m.def("silver_plan",
        [](const std::optional<std::string>& position_json, const std::optional<std::string>& newest_lsn,
           bool chunked, const std::optional<std::string>& events_json, const std::string& bronze_name) {
          std::optional<BronzeSnapshot> newest;
          if (newest_lsn) {
            newest = BronzeSnapshot{*newest_lsn, chunked, true, {}};
            if (chunked) {
              RequireFactsForChunked(events_json.has_value(), bronze_name);
              newest = ChunkedSnapshotOf(EventsOfJson(*events_json), *newest_lsn);
            }
          }
          return PlanJson(PlanSilverApply(PositionOf(position_json), newest));
        },
        nb::arg("position_json"), nb::arg("newest_lsn"), nb::arg("chunked"), nb::arg("events_json"),
        nb::arg("bronze_name"),
        "What one call applies (plan JSON), from silver's position and bronze's newest snapshot; "
        "events_json: the facts' snapshot events, None without a facts table (ConfigError for a "
        "chunked snapshot).");
  m.def("silver_position_moved", &ThrowSilverPositionMoved, nb::arg("control"), nb::arg("silver_name"),
        "Raises the ConcurrentModificationError of a silver position another call moved.");
  m.def("silver_statements",
        [](const std::string& plan_json, const std::string& bronze_sql, std::int64_t version,
           const std::string& oldest_wave_stamp,
           const std::string& bronze_schema_json, const std::vector<std::string>& keys,
           const std::string& silver_sql, const std::optional<std::string>& silver_schema_json,
           const std::string& rows_view, const std::string& images_view) {
          const auto plan = PlanOf(plan_json);
          const auto bronze = SchemaOf(bronze_schema_json, bronze_sql);
          std::vector<std::string> migrate;
          if (silver_schema_json) migrate = AddedColumnsSql(silver_sql, *SchemaOf(*silver_schema_json, silver_sql), *bronze);
          return std::make_tuple(catalog::PlanRowsSql(bronze_sql, version, plan, oldest_wave_stamp),
                                 catalog::PlanInstancesSql(bronze_sql, version, plan, oldest_wave_stamp),
                                 catalog::LatestImagesSql(rows_view, *bronze, keys),
                                 catalog::MergeImagesSql(silver_sql, images_view, *SilverSchema(*bronze), keys, plan.rebuild),
                                 migrate);
        },
        nb::arg("plan_json"), nb::arg("bronze_sql"), nb::arg("version"), nb::arg("oldest_wave_stamp"),
        nb::arg("bronze_schema_json"), nb::arg("keys"), nb::arg("silver_sql"), nb::arg("silver_schema_json"), nb::arg("rows_view"),
        nb::arg("images_view"),
        "(rows SELECT, SELECT DISTINCT of the instances in the rows' bounds, images SELECT over rows_view, MERGE of images_view, ALTER TABLEs adding bronze's "
        "new columns to silver).");
  m.def("silver_with_range_deletes_sql",
        [](const std::string& plan_json, const std::string& plans_sql, const std::string& plans_name,
           const nb::object& query, const std::string& bronze_schema_json, const std::vector<std::string>& keys,
           const std::string& silver_sql, const std::string& plan_view) -> std::optional<std::string> {
          const auto plan = PlanOf(plan_json);
          if (!WavesMayDeleteByRange(plan)) return std::nullopt;
          auto reader = ImportArrowStream(query(catalog::PlanRowsSql(plans_sql, *plan.open_snapshot_lsn)),
                                          "the plans table's rows");
          auto rows = reader->ToTable();
          if (!rows.ok()) throw InternalError("reading the plans table: " + rows.status().ToString());
          const auto chunks = PlanFromTable(**rows, plan.open_snapshot_app_id, Lsn::Parse(*plan.open_snapshot_lsn),
                                            plans_name);
          if (!chunks) return std::nullopt;
          const auto bronze = SchemaOf(bronze_schema_json, plans_name);
          const auto ranges = WaveRangesOf(plan, *chunks, keys, *bronze);
          if (!ranges) return std::nullopt;
          return catalog::WithRangeDeletesSql(plan_view, silver_sql, *bronze, *ranges);
        },
        nb::arg("plan_json"), nb::arg("plans_sql"), nb::arg("plans_name"), nb::arg("query"),
        nb::arg("bronze_schema_json"), nb::arg("keys"), nb::arg("silver_sql"), nb::arg("plan_view"),
        "The SELECT of the rows of plan_view and the waves' range deletes; None when none apply. "
        "query(sql) returns a pyarrow table or reader.");
  m.def("silver_wave_stamp_sql",
        [](const std::string& plan_json, const std::string& bronze_sql, std::int64_t version) -> std::optional<std::string> {
          auto sql = catalog::WaveStampSql(bronze_sql, version, PlanOf(plan_json));
          if (sql.empty()) return std::nullopt;
          return sql;
        },
        nb::arg("plan_json"), nb::arg("bronze_sql"), nb::arg("version"),
        "The SELECT of the oldest stamp of the waves the plan applies; None when it applies none.");
  m.def("silver_create_sql",
        [](const std::string& name, const std::string& bronze_schema_json, const std::string& bronze_name,
           const std::string& bronze_id) {
          return catalog::CreateTableSql(TableRef::Parse(name, "target"),
                                         SilverTableOptions(*SchemaOf(bronze_schema_json, bronze_name), bronze_name, bronze_id));
        },
        nb::arg("name"), nb::arg("bronze_schema_json"), nb::arg("bronze_name"), nb::arg("bronze_id"),
        "CREATE TABLE IF NOT EXISTS of a named silver table of bronze.");
  m.def("ensure_silver",
        [](const std::string& path, const std::string& bronze_schema_json, const std::string& bronze_name,
           const std::string& bronze_id) {
          TableRef::RequirePath(path, "target");
          const auto options = SilverTableOptions(*SchemaOf(bronze_schema_json, bronze_name), bronze_name, bronze_id);
          nb::gil_scoped_release release;
          if (!delta::DeltaTable::Exists(path)) delta::DeltaTable::Create(path, options);
        },
        nb::arg("path"), nb::arg("bronze_schema_json"), nb::arg("bronze_name"), nb::arg("bronze_id"),
        "Creates the silver table at a path when missing.");
  m.def("silver_position_after",
        [](const std::string& plan_json, const std::optional<std::string>& position_json, const std::string& max_lsn) {
          return PositionJson(PositionAfter(PlanOf(plan_json), PositionOf(position_json), max_lsn)).dump();
        },
        nb::arg("plan_json"), nb::arg("position_json"), nb::arg("max_lsn"),
        "Silver's position once the plan's rows, the newest change at max_lsn ('' for none), are applied.");
  m.def("silver_position_sql",
        [](const std::string& control, const std::string& silver_name, const std::optional<std::string>& expected,
           const std::string& position, const std::optional<std::string>& verdict) {
          return catalog::SilverPositionSql(TableRef::Parse(control, "control_table"), silver_name,
                                            PositionOf(expected), *PositionOf(position), VerdictOf(verdict));
        },
        nb::arg("control"), nb::arg("silver_name"), nb::arg("expected"), nb::arg("position"), nb::arg("verdict"),
        "The compare-and-set MERGE of silver's position (and verdict) into a named control table.");
  m.def("silver_position_among",
        [](nb::handle rows) -> std::optional<std::string> {
          const auto table = ImportArrowTable(rows, "rows");
          nb::gil_scoped_release release;
          auto position = SilverPositionAmong(table);
          if (!position) return std::nullopt;
          return PositionJson(*position).dump();
        },
        nb::arg("rows"),
        "Silver's position among one name's control rows read through Spark (a pyarrow.Table), "
        "by the rule read_silver_position applies to a control table at a path.");
  m.def("read_silver_position",
        [](const std::string& control, const std::string& silver_name) -> std::optional<std::string> {
          TableRef::RequirePath(control, "control_table");
          nb::gil_scoped_release release;
          auto position = ReadSilverPosition(control, silver_name);
          if (!position) return std::nullopt;
          return PositionJson(*position).dump();
        },
        nb::arg("control"), nb::arg("silver_name"), "Silver's position in a control table at a path.");
  m.def("write_silver_position",
        [](const std::string& control, const std::string& silver_name, const std::optional<std::string>& expected,
           const std::string& position, const std::optional<std::string>& verdict) {
          TableRef::RequirePath(control, "control_table");
          const auto was = PositionOf(expected);
          const auto now = *PositionOf(position);
          const auto moved = VerdictOf(verdict);
          nb::gil_scoped_release release;
          WriteSilverPosition(control, silver_name, was, now, moved);
        },
        nb::arg("control"), nb::arg("silver_name"), nb::arg("expected"), nb::arg("position"), nb::arg("verdict"),
        "WriteSilverPosition into a control table at a path.");
  m.def("read_verdict",
        [](const std::string& control, const std::string& table_name) -> std::optional<std::string> {
          TableRef::RequirePath(control, "control_table");
          nb::gil_scoped_release release;
          auto verdict = ReadVerdict(control, table_name);
          if (!verdict) return std::nullopt;
          return VerdictJson(*verdict);
        },
        nb::arg("control"), nb::arg("table_name"), "A table's verdict (JSON) in a control table at a path.");
  m.def("verdict_among",
        [](nb::handle rows, const std::string& table_name) -> std::optional<std::string> {
          const auto table = ImportArrowTable(rows, "rows");
          nb::gil_scoped_release release;
          auto verdict = VerdictAmong(table, table_name);
          if (!verdict) return std::nullopt;
          return VerdictJson(*verdict);
        },
        nb::arg("rows"), nb::arg("table_name"),
        "A table's verdict (JSON) among its control rows read through Spark (a pyarrow.Table), by "
        "the rule read_verdict applies to a control table at a path.");
}

}  // namespace mssql_cdc::python
