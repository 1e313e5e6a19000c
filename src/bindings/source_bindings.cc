// Python access to a Source: metadata calls and change reads handed to pyarrow through the
// Arrow C stream interface (zero copy: pyarrow.RecordBatchReader.from_stream(reader)).
#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "core/errors.h"
#include "core/facts_events.h"
#include "core/operations.h"
#include "core/source_options.h"
#include "core/sql_type.h"
#include "core/timezone.h"
#include "bindings/arrow_stream.h"
#include "source/odbc/bundled_driver.h"
#include "source/sim/sim_source.h"
#include "source/output_schema.h"
#include "source/source.h"
#include "source/source_clock.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

class PySource {
 public:
  PySource(std::unique_ptr<Source> source, const std::string& source_time_zone)
      : source_(std::move(source)), clock_(ResolveSourceClock(*source_, source_time_zone)) {}

  nb::list CaptureInstances() {
    nb::list out;
    for (const auto& ci : source_->ListCaptureInstances()) {
      nb::dict d;
      d["capture_instance"] = ci.name;
      d["source_schema"] = ci.source_schema;
      d["source_table"] = ci.source_table;
      d["start_lsn"] = ci.start_lsn.ToString();
      d["index_columns"] = ci.index_columns;
      out.append(d);
    }
    return out;
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

  std::string time_zone() const { return clock_.name(); }

 private:
  std::unique_ptr<Source> source_;
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
    return std::vector<std::string>{std::string(IsolationLevelName(IsolationLevel::kReadCommitted)),
                                    std::string(IsolationLevelName(IsolationLevel::kSnapshot))};
  }, "The values of the isolationLevel option, as documented (matched in any case).");
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
      .def("min_lsn", &PySource::MinLsn, nb::arg("capture_instance"))
      .def("max_lsn", &PySource::MaxLsn)
      .def_prop_ro("time_zone", &PySource::time_zone)
      .def("read_changes", &PySource::ReadChanges, nb::arg("capture_instance"), nb::arg("from_lsn"),
           nb::arg("to_lsn"), nb::arg("columns") = std::vector<std::string>{},
           nb::arg("include_command_id") = true, nb::arg("batch_rows") = 10'000);

  m.def("open_sim_source", [](const std::string& path, const std::string& source_time_zone) {
    return PySource(OpenSimSource(path), source_time_zone);
  }, nb::arg("path"), nb::arg("source_time_zone") = "auto",
  "Opens a simulated database file (read-only).");
}

}  // namespace mssql_cdc::python
