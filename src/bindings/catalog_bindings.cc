// Python access to the one table-argument rule (core/table_ref.h) and to the Spark SQL of
// named tables (catalog/table_sql.h), which the Spark package runs through its session.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "catalog/table_sql.h"
#include "core/errors.h"
#include "core/offset.h"
#include "delta/schema.h"
#include "engine/table_schemas.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

TableKind KindOf(const std::string& kind) {
  if (kind == "bronze") return TableKind::kBronze;
  if (kind == "facts") return TableKind::kFacts;
  if (kind == "control") return TableKind::kControl;
  if (kind == "plans") return TableKind::kPlans;
  throw InternalError("no table kind '" + kind + "': bronze, facts, control or plans");
}

delta::CreateOptions DefinitionOf(TableKind kind, const std::optional<std::string>& output_schema,
                                  const std::optional<std::string>& capture_instance) {
  switch (kind) {
    case TableKind::kBronze:
      if (!output_schema) throw InternalError("a bronze definition needs the output schema");
      return BronzeTableOptions(
          delta::FromDeltaSchemaString(*output_schema, "the output schema JSON"),
          capture_instance.value_or(""));
    case TableKind::kFacts: return FactsTableOptions();
    case TableKind::kControl: return ControlTableOptions();
    case TableKind::kPlans: return PlansTableOptions();
  }
  throw InternalError("unknown table kind");
}

// A table argument, name or path: statements name a path as delta.`path`.
TableRef RefOf(const std::string& text, const std::string& what) { return TableRef::Parse(text, what); }

TableRef NameOf(const std::string& text, const std::string& what) {
  TableRef ref = TableRef::Parse(text, what);
  if (!ref.is_name()) throw InternalError(what + "='" + text + "' is a path, not a table name");
  return ref;
}

std::vector<catalog::ColumnDef> ColumnsOf(
    const std::vector<std::tuple<std::string, std::string, std::optional<std::string>>>& columns) {
  std::vector<catalog::ColumnDef> out;
  for (const auto& [name, type, comment] : columns) out.push_back({name, type, comment});
  return out;
}

}  // namespace

void BindCatalog(nb::module_& m) {
  m.def("table_name",
        [](const std::string& text, const std::string& what)
            -> std::optional<std::pair<std::string, std::string>> {
          TableRef ref = TableRef::Parse(text, what);
          if (ref.is_path()) return std::nullopt;
          return std::pair(ref.QuotedName(), ref.QuotedSchema());
        },
        nb::arg("text"), nb::arg("what"),
        "(quoted name, quoted schema or '') when `text` names a table, None when it is a path "
        "or URI (it contains '/' or ':'); ConfigError naming `what` when it is neither.");
  m.def("create_table_sql",
        [](const std::string& kind, const std::string& name,
           const std::optional<std::string>& output_schema_json,
           const std::optional<std::string>& capture_instance) {
          const TableKind k = KindOf(kind);
          return catalog::CreateTableSql(NameOf(name, kind),
                                         DefinitionOf(k, output_schema_json, capture_instance));
        },
        nb::arg("kind"), nb::arg("name"), nb::arg("output_schema_json") = nb::none(),
        nb::arg("capture_instance") = nb::none(),
        "CREATE TABLE IF NOT EXISTS for a bronze, facts or control table named `name`.");
  m.def("migrate_table_sql",
        [](const std::string& kind, const std::string& name, const std::string& existing_schema_json,
           const delta::StringMap& existing_properties,
           const std::optional<std::string>& output_schema_json) {
          const TableKind k = KindOf(kind);
          const TableRef ref = RefOf(name, kind);
          std::optional<std::string> output = output_schema_json;
          if (k == TableKind::kBronze && !output) {
            output = delta::ToDeltaSchemaString(*BronzeOutputSchema(
                *delta::FromDeltaSchemaString(existing_schema_json, "table " + name)));
          }
          return catalog::MigrateTableSql(ref, k, existing_schema_json, existing_properties,
                                          DefinitionOf(k, output, std::nullopt));
        },
        nb::arg("kind"), nb::arg("name"), nb::arg("existing_schema_json"),
        nb::arg("existing_properties"), nb::arg("output_schema_json") = nb::none(),
        "The ALTER TABLE statements that bring the existing table `name` (a name, or a path "
        "as delta.`path`), with its table properties, up to the definition (empty when none); "
        "a bronze table without `output_schema_json` keeps its own captured columns. "
        "ConfigError when it is not a table of `kind`, a newer release migrated it, or a "
        "column's type differs; SchemaChangedError when a new column needs column mapping the "
        "table lacks.");
  m.def("user_table_sql",
        [](const std::string& table, const std::vector<std::tuple<std::string, std::string, std::optional<std::string>>>& columns,
           const std::optional<std::string>& comment, const delta::StringMap& properties) {
          return catalog::CreateTableSql(RefOf(table, "table"), ColumnsOf(columns), comment, properties);
        },
        nb::arg("table"), nb::arg("columns"), nb::arg("comment"), nb::arg("properties"),
        "CREATE TABLE IF NOT EXISTS of (name, Spark SQL type, comment) columns at `table`.");
  m.def("add_columns_sql",
        [](const std::string& table, const std::vector<std::string>& existing,
           const std::vector<std::tuple<std::string, std::string, std::optional<std::string>>>& columns)
            -> std::optional<std::string> {
          std::string sql = catalog::AddColumnsSql(RefOf(table, "table"), existing, ColumnsOf(columns));
          if (sql.empty()) return std::nullopt;
          return sql;
        },
        nb::arg("table"), nb::arg("existing"), nb::arg("columns"),
        "ALTER TABLE ADD COLUMNS of the columns `existing` lacks (ignoring case); None when none.");
  m.def("set_comments_sql",
        [](const std::string& table, const std::vector<std::pair<std::string, std::string>>& columns,
           const std::optional<std::string>& table_comment) {
          return catalog::SetCommentsSql(RefOf(table, "table"), columns, table_comment);
        },
        nb::arg("table"), nb::arg("columns"), nb::arg("table_comment") = nb::none(),
        "The statements that set the named columns' comments, then the table's.");
  m.def("check_table_columns",
        [](const std::string& kind, const std::vector<std::string>& columns, const std::string& where) {
          const TableKind k = KindOf(kind);
          CheckTableColumns(columns, k, where,
                            std::string("give the columns every ") + TableKindName(k) + " has");
        },
        nb::arg("kind"), nb::arg("columns"), nb::arg("where"),
        "ConfigError when `columns` lack one every table of `kind` (bronze, facts, control, "
        "plans) has had since its first version.");
  m.def("check_table",
        [](const std::string& kind, const std::string& uri) {
          const TableKind k = KindOf(kind);
          TableRef::RequirePath(uri, kind);
          nb::gil_scoped_release release;
          CheckExistingTable(uri, k);
        },
        nb::arg("kind"), nb::arg("uri"),
        "ConfigError when the existing table at `uri` is not a table of `kind`, or a newer "
        "release migrated it; nothing when there is none.");
  m.def("advance_verdict_sql",
        [](const std::string& control, const std::string& table_name,
           const std::string& end_offset, const std::string& granularity)
            -> std::optional<std::string> {
          std::string sql = catalog::AdvanceVerdictSql(NameOf(control, "control_table"),
                                                       table_name, Offset::FromJson(end_offset),
                                                       ParseGranularity(granularity));
          if (sql.empty()) return std::nullopt;
          return sql;
        },
        nb::arg("control"), nb::arg("table_name"), nb::arg("end_offset"), nb::arg("granularity"),
        "The forward-only MERGE of `table_name`'s verdict into the named control table; None "
        "when the offset has no commit time.");
}

}  // namespace mssql_cdc::python
