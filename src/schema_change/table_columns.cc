#include "schema_change/table_columns.h"

#include <arrow/compute/cast.h>
#include <arrow/type.h>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/sql_type.h"
#include "delta/compute_kernels.h"
#include "schema_change/type_holds.h"

namespace mssql_cdc {
namespace {

CapturedColumn* FindColumn(std::vector<CapturedColumn>& columns, const std::string& name) {
  for (auto& column : columns) {
    if (EqualsIgnoringAsciiCase(column.name, name)) return &column;
  }
  return nullptr;
}

const CapturedColumn* FindColumn(const std::vector<CapturedColumn>& columns, const std::string& name) {
  for (const auto& column : columns) {
    if (EqualsIgnoringAsciiCase(column.name, name)) return &column;
  }
  return nullptr;
}

bool Holds(const CapturedColumn& column, const CapturedColumn& incoming) {
  return TypeHolds(*ArrowTypeFor(column.type, column.name), *ArrowTypeFor(incoming.type, incoming.name));
}

}  // namespace

std::vector<CapturedColumn> UnionOfInstances(const std::vector<InstanceColumns>& instances,
                                             bool check_types) {
  std::vector<CapturedColumn> out;
  std::vector<std::string> typed_by;  // the instance each column's type came from
  for (const auto& instance : instances) {
    for (const auto& column : instance.columns) {
      CapturedColumn* known = FindColumn(out, column.name);
      if (!known) {
        out.push_back(column);
        out.back().column_ordinal = static_cast<int>(out.size());
        typed_by.push_back(instance.capture_instance);
        continue;
      }
      const std::size_t at = static_cast<std::size_t>(known - out.data());
      if (check_types && !(known->type == column.type) && !Holds(column, *known)) {
        throw SchemaChangedError(
            "capture instances '" + typed_by[at] + "' and '" + instance.capture_instance +
            "' type column '" + column.name + "' incompatibly (" + known->type.ToString() +
            " and " + column.type.ToString() + "): the newer type does not hold every value of "
            "the older, so the table has no one schema to read both with. Name the columns to "
            "read and their types in the 'columns' option (e.g. columns='" + column.name + " " +
            SparkTypeFor(column.type, column.name) + ", ...'), or disable the instance no longer "
            "needed");
      }
      const int ordinal = known->column_ordinal;
      *known = column;
      known->column_ordinal = ordinal;
      typed_by[at] = instance.capture_instance;
    }
  }
  return out;
}

std::vector<CapturedColumn> SelectListedColumns(arrow::FieldVector& fields,
                                                const std::vector<CapturedColumn>& table_columns,
                                                const std::string& table) {
  std::vector<CapturedColumn> out;
  for (auto& field : fields) {
    const CapturedColumn* captured = FindColumn(table_columns, field->name());
    if (!captured) {
      throw ConfigError("No capture instance of " + table + " captures column '" + field->name() +
                        "' that the 'columns' option lists; the captured columns are " +
                        DescribeColumns(table_columns) + ": leave it out, or enable a capture "
                        "instance that captures it");
    }
    const auto type = ArrowTypeFor(captured->type, captured->name);
    delta::EnsureComputeKernels();
    if (!arrow::compute::CanCast(*type, *field->type())) {
      throw ConfigError("column '" + captured->name + "' of " + table + " is captured as " +
                        SparkTypeName(*type) + ", which cannot be read as " +
                        SparkTypeName(*field->type()) + " (option 'columns'): give a type it "
                        "converts to");
    }
    out.push_back(*captured);
    field = arrow::field(captured->name, field->type());
  }
  return out;
}

arrow::FieldVector FieldsOf(const std::vector<CapturedColumn>& columns) {
  arrow::FieldVector out;
  for (const auto& column : columns) {
    out.push_back(arrow::field(column.name, ArrowTypeFor(column.type, column.name)));
  }
  return out;
}

std::vector<CapturedColumn> ColumnsNotHeld(const arrow::FieldVector& reads,
                                           const std::vector<CapturedColumn>& captured) {
  std::vector<CapturedColumn> out;
  for (const auto& column : captured) {
    const arrow::Field* known = nullptr;
    for (const auto& field : reads) {
      if (EqualsIgnoringAsciiCase(field->name(), column.name)) known = field.get();
    }
    if (!known || !TypeHolds(*known->type(), *ArrowTypeFor(column.type, column.name))) {
      out.push_back(column);
    }
  }
  return out;
}

std::string DescribeColumns(const std::vector<CapturedColumn>& columns) {
  std::string out;
  for (const auto& column : columns) {
    if (!out.empty()) out += ", ";
    out += column.name + " " + SparkTypeFor(column.type, column.name);
  }
  return out;
}

}  // namespace mssql_cdc

namespace mssql_cdc {

std::string DescribeFields(const arrow::FieldVector& fields) {
  std::string out;
  for (const auto& field : fields) {
    if (!out.empty()) out += ", ";
    out += field->name() + " " + SparkTypeName(*field->type());
  }
  return out;
}

}  // namespace mssql_cdc
