#include "schema_change/batch_schema.h"

#include <arrow/type.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/ascii.h"
#include "core/errors.h"
#include "schema_change/table_columns.h"
#include "schema_change/type_holds.h"
#include "core/spark_columns.h"
#include "core/sql_type.h"

namespace mssql_cdc {
namespace {

const CapturedColumn* Find(const std::vector<CapturedColumn>& columns, const std::string& name) {
  for (const auto& column : columns) {
    if (EqualsIgnoringAsciiCase(column.name, name)) return &column;
  }
  return nullptr;
}

const arrow::Field* Find(const arrow::FieldVector& fields, const std::string& name) {
  for (const auto& field : fields) {
    if (EqualsIgnoringAsciiCase(field->name(), name)) return field.get();
  }
  return nullptr;
}

std::string DdlNote(DdlKind kind) {
  switch (kind) {
    case DdlKind::kAddColumn:
      return "the new column arrives with a new capture instance that captures it";
    case DdlKind::kDropColumn:
      return "the column stays captured and reads NULL from here on";
    case DdlKind::kAlterColumn:
      return "the captured type changed";
    case DdlKind::kOther:
      return "nothing changes for the stream";
  }
  return "";
}

}  // namespace

BatchSchema ReadBatchSchema(Source& source, const TableInstances& instances,
                            const BatchSchemaRules& rules, const Lsn& after, const Lsn& through) {
  BatchSchema out;
  if (through <= after) return out;
  out.segments = instances.Segments(after.Increment(), through);
  out.switches = instances.SwitchesIn(after, through);

  // DDL of the instances read, once per statement (SQL Server records it in each instance).
  std::set<std::pair<Lsn, std::string>> seen;
  struct Found {
    Lsn lsn;
    std::string command;
    std::string instance;
  };
  std::vector<Found> ddl;
  std::vector<std::string> read_instances;
  for (const auto& segment : out.segments) {
    if (std::find(read_instances.begin(), read_instances.end(), segment.capture_instance) ==
        read_instances.end()) {
      read_instances.push_back(segment.capture_instance);
    }
  }
  for (const auto& name : read_instances) {
    for (const auto& event : source.DdlHistory(name)) {
      if (event.ddl_lsn <= after || event.ddl_lsn > through) continue;
      if (seen.emplace(event.ddl_lsn, event.ddl_command).second) {
        ddl.push_back({event.ddl_lsn, event.ddl_command, name});
      }
    }
  }
  std::sort(ddl.begin(), ddl.end(), [](const Found& a, const Found& b) { return a.lsn < b.lsn; });
  if (!ddl.empty() && rules.policy == SchemaChangePolicy::kFail) {
    throw SchemaChangedError(
        "capture instance '" + ddl.front().instance + "' records DDL at LSN " +
        ddl.front().lsn.ToString() + " (" + ddl.front().command +
        ") and schemaChangePolicy=fail stops at any DDL; to pass it, restart once with "
        "schemaChangePolicy=classify, which goes on unless the stream's types no longer hold "
        "the captured ones");
  }

  bool type_changed = false;
  for (const auto& found : ddl) {
    const DdlKind kind = ClassifyDdl(found.command);
    if (kind == DdlKind::kAlterColumn) type_changed = true;
    out.events.push_back({std::string(facts_event::kSchemaChange), found.lsn, found.command, found.instance,
                          std::nullopt});
    out.warnings.push_back("capture instance '" + found.instance + "' records DDL at LSN " +
                           found.lsn.ToString() + ": " + found.command + " (" +
                           std::string(DdlKindName(kind)) + ": " + DdlNote(kind) + ")");
  }
  // A type change re-types the captured column in every instance that captures it; the rows
  // read now come in the new type.
  if (type_changed) {
    for (const auto& name : read_instances) {
      for (const auto& column : source.CapturedColumns(name)) {
        const arrow::Field* reads = Find(rules.reads, column.name);
        if (reads && !TypeHolds(*reads->type(), *ArrowTypeFor(column.type, column.name))) {
          if (!Find(out.not_held, column.name)) out.not_held.push_back(column);
          if (out.not_held_at.empty()) {
            out.not_held_at = "a type change of capture instance '" + name + "' (DDL in LSNs " +
                              after.Increment().ToString() + " to " + through.ToString() + ")";
          }
        }
      }
    }
  }

  for (const auto& change : out.switches) {
    const std::vector<CapturedColumn> captured = source.CapturedColumns(change.to.name);
    arrow::FieldVector left_out;  // read by the stream, not captured by the new one
    for (const auto& field : rules.reads) {
      if (!Find(captured, field->name())) left_out.push_back(field);
    }
    std::vector<CapturedColumn> not_read;  // captured by the new one, left out by `columns`
    for (const auto& column : ColumnsNotHeld(rules.reads, captured)) {
      if (rules.columns_given && !Find(rules.reads, column.name)) {
        not_read.push_back(column);
      } else if (!Find(out.not_held, column.name)) {
        out.not_held.push_back(column);
        if (out.not_held_at.empty()) {
          out.not_held_at = "capture instance '" + change.to.name + "' (from LSN " +
                            change.to.start_lsn.ToString() + ")";
        }
      }
    }
    std::string detail = change.from_instance + " -> " + change.to.name;
    if (!left_out.empty()) {
      detail += "; not captured by " + change.to.name + ": " + DescribeFields(left_out);
      out.warnings.push_back("capture instance '" + change.to.name +
                             "' does not capture columns the stream reads (" +
                             DescribeFields(left_out) + "): they read NULL from LSN " +
                             change.to.start_lsn.ToString() + " on");
    }
    if (!not_read.empty()) {
      detail += "; left out by the columns option: " + DescribeColumns(not_read);
      out.warnings.push_back("capture instance '" + change.to.name + "' captures columns the " +
                             "'columns' option leaves out (" + DescribeColumns(not_read) +
                             "): the stream goes on without them; add them to 'columns' to "
                             "read them");
    }
    out.events.push_back({std::string(facts_event::kCaptureInstanceSwitched), change.to.start_lsn, detail,
                          change.to.name, std::nullopt});
  }
  std::stable_sort(out.events.begin(), out.events.end(),
                   [](const SchemaEvent& a, const SchemaEvent& b) { return a.lsn < b.lsn; });
  return out;
}

void ThrowNotHeld(const BatchSchema& schema, const std::string& table) {
  const bool reaches = !schema.switches.empty() && schema.not_held_at.rfind("capture instance", 0) == 0;
  if (reaches) {
    throw SchemaChangedError(
        "The stream reaches " + schema.not_held_at + " of " + table + ", which captures columns "
        "the query's schema lacks or cannot hold: " + DescribeColumns(schema.not_held) +
        ". Restart the query: it infers its schema again (the union of the table's capture "
        "instances) and goes on from here, every change once; or name the columns to read in "
        "the 'columns' option, with which a stream switches without stopping");
  }
  throw SchemaChangedError(
      "a type change of " + table + " within the batch (" + schema.not_held_at +
      ") gives columns the query's types cannot hold: " + DescribeColumns(schema.not_held) +
      ". Nothing of the batch was read. Restart the query: it infers the new types (bronze then "
      "takes the wider type only with type widening on: ALTER TABLE <bronze> SET TBLPROPERTIES "
      "('delta.enableTypeWidening'='true'))");
}

std::vector<CapturedColumn> InferTableColumns(Source& source, const TableInstances& instances) {
  std::vector<InstanceColumns> columns;
  for (const auto& instance : instances.all()) {
    columns.push_back({instance.name, source.CapturedColumns(instance.name)});
  }
  return UnionOfInstances(columns);
}

StreamColumns ResolveStreamColumns(Source& source, const TableInstances& instances,
                                   const std::optional<std::string>& columns_option) {
  StreamColumns out;
  if (!columns_option) {
    out.captured = InferTableColumns(source, instances);
    out.fields = FieldsOf(out.captured);
    return out;
  }
  out.fields = ParseSparkColumns(*columns_option);
  std::vector<InstanceColumns> columns;
  for (const auto& instance : instances.all()) {
    columns.push_back({instance.name, source.CapturedColumns(instance.name)});
  }
  out.captured = SelectListedColumns(out.fields, UnionOfInstances(columns, /*check_types=*/false),
                                     instances.table());
  out.listed = true;
  return out;
}

std::vector<LsnRange> SplitSegments(Source& source, const std::vector<InstanceSegment>& segments,
                                    const Lsn& from, int max_partitions) {
  std::vector<LsnRange> ranges;
  for (const auto& segment : segments) {
    if (segment.to < from) continue;
    for (auto& range : BatchPlanner::Split(source, segment.capture_instance,
                                           std::max(segment.from, from), segment.to, max_partitions)) {
      ranges.push_back(std::move(range));
    }
  }
  return ranges;
}

std::optional<Lsn> PendingEnableLimit(Source& source, const TableInstances& instances) {
  if (instances.pending().empty()) return std::nullopt;
  LocalMicros earliest = instances.pending().front().create_date;
  for (const auto& pending : instances.pending()) {
    earliest.value = std::min(earliest.value, pending.create_date.value);
  }
  // Entries carry milliseconds at best: one microsecond earlier is strictly before.
  return source.LastCommitAtOrBefore(LocalMicros{earliest.value - 1}).value_or(Lsn());
}

}  // namespace mssql_cdc
