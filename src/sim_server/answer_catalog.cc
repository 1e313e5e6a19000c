// The CDC catalog procedures and sys.columns. The list of instances, their captured columns
// and DDL history come from the sim backend of Source; the columns of cdc.change_tables it
// does not carry (object ids, flags, names of role, index and filegroup) from the catalog.
#include "core/time.h"
#include "sim/storage.h"
#include "sim_server/answers.h"
#include "sim_server/column_facts.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/sql_tokens.h"

namespace mssql_cdc::sim_server {
namespace {

// "[id], [region]", as sp_cdc_help_change_data_capture lists columns.
template <typename Names, typename NameOf>
std::string ColumnList(const Names& names, NameOf name_of) {
  std::string out;
  for (const auto& item : names) {
    if (!out.empty()) out += ", ";
    out += "[";
    for (char c : name_of(item)) {
      out += c;
      if (c == ']') out += ']';
    }
    out += "]";
  }
  return out;
}

void OptionalInt(tds::ResultSet& rows, const std::optional<int>& value) {
  if (value) {
    rows.Int(*value);
  } else {
    rows.Null();
  }
}

void Stored(tds::ResultSet& rows, const sim::Statement& row, int column) {
  if (row.IsNull(column)) {
    rows.Null();
  } else {
    rows.Text(row.TextView(column));
  }
}

// The instance named by a procedure's @capture_instance; 22981 when there is none.
sim::CaptureInstance RequireInstance(Session& session, const SqlValue& argument) {
  const auto name = AsText(argument);
  std::optional<sim::CaptureInstance> instance;
  if (name) instance = FindCaptureInstance(session.catalog(), *name);
  if (!instance) throw SqlError(errors::ObjectDoesNotExistOrAccessDenied());
  return *instance;
}

void Lsn10(tds::ResultSet& rows, const Lsn& lsn) {
  rows.Binary(std::string_view(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize));
}

}  // namespace

void Answer(Session& session, const ListCaptureInstancesQuery& query, tds::ReplyWriter& reply) {
  const auto source_schema = AsText(query.source_schema);
  const auto source_name = AsText(query.source_name);
  auto selected = [&](const CaptureInstanceInfo& info) {
    return (!source_schema || EqualsIgnoringCase(*source_schema, info.source_schema)) &&
           (!source_name || EqualsIgnoringCase(*source_name, info.source_table));
  };
  tds::ResultSet& rows = reply.BeginResult({
      Column("source_schema", types::Sysname(), false),
      Column("source_table", types::Sysname(), false),
      Column("capture_instance", types::Sysname(), false),
      Column("object_id", types::Int(), false),
      Column("source_object_id", types::Int(), false),
      Column("start_lsn", types::Binary10(), false),
      Column("end_lsn", types::Binary10()),
      Column("supports_net_changes", types::Bit(), false),
      Column("has_drop_pending", types::Bit()),
      Column("role_name", types::Sysname()),
      Column("index_name", types::Sysname()),
      Column("filegroup_name", types::Sysname()),
      Column("create_date", types::Datetime(), false),
      Column("index_column_list", types::NvarcharMax()),
      Column("captured_column_list", types::NvarcharMax()),
  });
  StatementLease details = session.statements().Prepare(
      "SELECT object_id, source_object_id, end_lsn, supports_net_changes, has_drop_pending, "
      "role_name, index_name, filegroup_name, create_date FROM cdc_change_tables "
      "WHERE capture_instance = ?1");
  for (const CaptureInstanceInfo& info : session.source().ListCaptureInstances()) {
    // SQL Server lists an instance to a login that may select the source table's columns
    // (sp_cdc_help_change_data_capture); reading its change table takes a grant of its own,
    // which a newer instance may still lack. A login granted only the change table sees it too.
    if (!selected(info)) continue;
    if (!session.access().CanReadChangeTable(info.name) &&
        !session.access().CanReadTable(sim::TableName{info.source_schema, info.source_table})) {
      continue;
    }
    details->Reset();
    details->BindText(1, info.name);
    if (!details->Step()) continue;  // disabled since the list was read
    const std::vector<CapturedColumn> captured = session.source().CapturedColumns(info.name);
    rows.Text(info.source_schema);
    rows.Text(info.source_table);
    rows.Text(info.name);
    rows.Int(details->Int(0));
    rows.Int(details->Int(1));
    Lsn10(rows, info.start_lsn);
    if (details->IsNull(2)) {
      rows.Null();
    } else {
      rows.Binary(details->Blob(2));
    }
    rows.Int(details->Int(3));
    if (details->IsNull(4)) {
      rows.Null();
    } else {
      rows.Int(details->Int(4));
    }
    Stored(rows, *details, 5);
    Stored(rows, *details, 6);
    Stored(rows, *details, 7);
    rows.Text(details->TextView(8));
    rows.Text(ColumnList(info.index_columns, [](const std::string& c) { return c; }));
    rows.Text(ColumnList(captured, [](const CapturedColumn& c) { return c.name; }));
    rows.EndRow();
  }
}

void Answer(Session& session, const CapturedColumnsQuery& query, tds::ReplyWriter& reply) {
  const sim::CaptureInstance instance = RequireInstance(session, query.capture_instance);
  tds::ResultSet& rows = reply.BeginResult({
      Column("source_schema", types::Sysname(), false),
      Column("source_table", types::Sysname(), false),
      Column("capture_instance", types::Sysname(), false),
      Column("column_name", types::Sysname(), false),
      Column("column_id", types::Int()),
      Column("column_ordinal", types::Int(), false),
      Column("data_type", types::Sysname(), false),
      Column("character_maximum_length", types::Int()),
      Column("numeric_precision", types::Tinyint()),
      Column("numeric_precision_radix", types::Smallint()),
      Column("numeric_scale", types::Int()),
      Column("datetime_precision", types::Smallint()),
  });
  for (const CapturedColumn& column : session.source().CapturedColumns(instance.name)) {
    const ColumnFacts facts = FactsOf(column.type);
    rows.Text(instance.table.schema);
    rows.Text(instance.table.name);
    rows.Text(instance.name);
    rows.Text(column.name);
    rows.Int(column.column_id);
    rows.Int(column.column_ordinal);
    rows.Text(column.type.name);
    OptionalInt(rows, facts.character_maximum_length);
    OptionalInt(rows, facts.numeric_precision);
    OptionalInt(rows, facts.numeric_precision_radix);
    OptionalInt(rows, facts.numeric_scale);
    OptionalInt(rows, facts.datetime_precision);
    rows.EndRow();
  }
}

void Answer(Session& session, const DdlHistoryQuery& query, tds::ReplyWriter& reply) {
  const sim::CaptureInstance instance = RequireInstance(session, query.capture_instance);
  tds::ResultSet& rows = reply.BeginResult({
      Column("source_schema", types::Sysname(), false),
      Column("source_table", types::Sysname(), false),
      Column("capture_instance", types::Sysname(), false),
      Column("required_column_update", types::Bit(), false),
      Column("ddl_command", types::NvarcharMax(), false),
      Column("ddl_lsn", types::Binary10(), false),
      Column("ddl_time", types::Datetime()),
  });
  for (const DdlEvent& event : session.source().DdlHistory(instance.name)) {
    rows.Text(instance.table.schema);
    rows.Text(instance.table.name);
    rows.Text(instance.name);
    rows.Int(0);  // the simulator's DDL never changes a captured column
    rows.Text(event.ddl_command);
    Lsn10(rows, event.ddl_lsn);
    rows.Text(FormatDateTime(event.ddl_time.value, 3));
    rows.EndRow();
  }
}

void Answer(Session& session, const SourceColumnsQuery& query, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult({Column("name", types::Sysname())});
  const auto text = AsText(query.object_name);
  if (!text) return;
  const auto name = ParseObjectName(*text);
  if (!name) return;
  const auto table = FindSourceTable(session.catalog(), name->schema, name->name);
  // sys.columns shows the columns of the tables a login may read, and no others.
  if (!table || !session.access().CanReadTable(table->name)) return;
  for (const sim::ColumnInfo& column : table->columns) {
    rows.Text(column.name);
    rows.EndRow();
  }
}

void Answer(Session& session, const TableColumnsQuery& query, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult(
      query.collation
          ? std::vector<tds::ResultColumn>{Column("name", types::Sysname()), Column("collation_name", types::Sysname())}
          : std::vector<tds::ResultColumn>{Column("name", types::Sysname()), Column("column_id", types::Int(), false),
                                           Column("is_computed", types::Bit(), false)});
  const auto schema = AsText(query.schema);
  const auto name = AsText(query.table);
  if (!schema || !name) return;  // QUOTENAME(NULL) is NULL: OBJECT_ID finds nothing
  const auto table = FindSourceTable(session.catalog(), *schema, *name);
  // sys.columns shows the columns of the tables a login may read, and no others.
  if (!table || !session.access().CanReadTable(table->name)) return;
  for (const sim::ColumnInfo& column : table->columns) {
    rows.Text(column.name);
    if (query.collation) {
      // Character columns carry the database's default collation; the others none.
      if (column.type.family() == SqlTypeFamily::kCharacter && column.type.kind() != SqlTypeKind::kXml) {
        rows.Text("SQL_Latin1_General_CP1_CI_AS");
      } else {
        rows.Null();
      }
    } else {
      rows.Int(column.column_id);
      rows.Int(0);  // the simulator has no computed columns
    }
    rows.EndRow();
  }
}

}  // namespace mssql_cdc::sim_server
