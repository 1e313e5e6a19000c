// Arrow across the Python border through the Arrow PyCapsule interface: record batches
// handed to pyarrow (`__arrow_c_stream__`, zero copy), and schemas and streams taken from any
// object that exports them (pyarrow.Schema, Table, RecordBatchReader, ...).
//
// A failure inside a stream crosses the C stream interface as an errno and a message only, so
// pyarrow raises its own class (OSError) for it; iterating an ArrowStream directly instead
// raises the engine's error class (DataLossError, SourceError, ...).
#pragma once

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <utility>

#include "core/errors.h"
#include "core/arrow_status.h"

namespace mssql_cdc::python {

namespace nb = nanobind;

// A capsule that frees what it holds unless a consumer took it (moved its release out).
template <typename CStruct>
nb::object OwningCapsule(CStruct* value, const char* name) {
  PyObject* capsule = PyCapsule_New(value, name, [](PyObject* cap) {
    auto* v = static_cast<CStruct*>(PyCapsule_GetPointer(cap, PyCapsule_GetName(cap)));
    if (v->release != nullptr) v->release(v);
    delete v;
  });
  if (capsule == nullptr) {
    if (value->release != nullptr) value->release(value);
    delete value;
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// `schema` as a pyarrow.Schema.
inline nb::object ToPyArrowSchema(const arrow::Schema& schema) {
  auto* c_schema = new ArrowSchema();
  arrow::Status status = arrow::ExportSchema(schema, c_schema);
  if (!status.ok()) {
    delete c_schema;
    throw InternalError("exporting an Arrow schema: " + status.ToString());
  }
  nb::object capsule = OwningCapsule(c_schema, "arrow_schema");
  return nb::module_::import_("pyarrow").attr("Schema").attr("_import_from_c_capsule")(capsule);
}

// `batch` as a pyarrow.RecordBatch, without a copy.
inline nb::object ToPyArrowBatch(const std::shared_ptr<arrow::RecordBatch>& batch) {
  auto* c_schema = new ArrowSchema();
  auto* c_array = new ArrowArray();
  arrow::Status status = arrow::ExportRecordBatch(*batch, c_array, c_schema);
  if (!status.ok()) {
    delete c_schema;
    delete c_array;
    throw InternalError("exporting an Arrow record batch: " + status.ToString());
  }
  nb::object schema_capsule = OwningCapsule(c_schema, "arrow_schema");
  nb::object array_capsule = OwningCapsule(c_array, "arrow_array");
  return nb::module_::import_("pyarrow").attr("RecordBatch").attr("_import_from_c_capsule")(
      schema_capsule, array_capsule);
}

// An Arrow stream not yet handed to a consumer: `__arrow_c_stream__` gives it away once, or
// iterating it yields pyarrow.RecordBatch objects until the end.
class ArrowStream {
 public:
  explicit ArrowStream(std::shared_ptr<arrow::RecordBatchReader> reader)
      : reader_(std::move(reader)) {}

  nb::object Schema() const {
    if (!reader_) throw ConfigError("this Arrow stream was already consumed");
    return ToPyArrowSchema(*reader_->schema());
  }

  // The next record batch; StopIteration at the end. A failed read raises its Error class.
  nb::object Next() {
    if (!reader_) throw nb::stop_iteration();
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status status;
    {
      nb::gil_scoped_release release;
      status = reader_->ReadNext(&batch);
    }
    if (!status.ok()) {
      reader_.reset();
      ThrowIfError(status);
    }
    if (!batch) {
      reader_.reset();
      throw nb::stop_iteration();
    }
    return ToPyArrowBatch(batch);
  }

  nb::object ExportCapsule(nb::object /*requested_schema*/) {
    if (!reader_) throw ConfigError("this Arrow stream was already consumed");
    auto* stream = new ArrowArrayStream();
    arrow::Status status = arrow::ExportRecordBatchReader(std::move(reader_), stream);
    if (!status.ok()) {
      delete stream;
      throw InternalError("exporting an Arrow stream: " + status.ToString());
    }
    return OwningCapsule(stream, "arrow_array_stream");
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
};

// Registers ArrowStream with the module once (source_bindings.cc does).
inline void BindArrowStream(nb::module_& m) {
  nb::class_<ArrowStream>(m, "ArrowStream",
                          "Record batches for pyarrow.RecordBatchReader.from_stream(), or to "
                          "iterate as pyarrow.RecordBatch objects (failures then raise the "
                          "engine's error classes). Either way, once.")
      .def("__arrow_c_stream__", &ArrowStream::ExportCapsule,
           nb::arg("requested_schema") = nb::none())
      .def_prop_ro("schema", &ArrowStream::Schema, "The stream's schema as a pyarrow.Schema.")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &ArrowStream::Next);
}

// The schema of an object with `__arrow_c_schema__` (pyarrow.Schema, Field, DataType...).
// Throws ConfigError naming `what` when it has none.
inline std::shared_ptr<arrow::Schema> ImportArrowSchema(nb::handle obj, const char* what) {
  if (!nb::hasattr(obj, "__arrow_c_schema__")) {
    throw ConfigError(std::string(what) +
                      " must export an Arrow schema (__arrow_c_schema__), e.g. a pyarrow.Schema");
  }
  nb::object capsule = obj.attr("__arrow_c_schema__")();
  auto* c_schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_schema"));
  if (c_schema == nullptr) throw nb::python_error();
  auto result = arrow::ImportSchema(c_schema);  // moves the schema out; the capsule frees nothing
  if (!result.ok()) throw ConfigError(std::string(what) + ": " + result.status().ToString());
  return *std::move(result);
}

// A reader over an object with `__arrow_c_stream__` (pyarrow.Table, RecordBatchReader, ...).
// Throws ConfigError naming `what` when it has none.
inline std::shared_ptr<arrow::RecordBatchReader> ImportArrowStream(nb::handle obj,
                                                                   const char* what) {
  if (!nb::hasattr(obj, "__arrow_c_stream__")) {
    throw ConfigError(std::string(what) +
                      " must export an Arrow stream (__arrow_c_stream__), e.g. a pyarrow.Table "
                      "or RecordBatchReader");
  }
  nb::object capsule = obj.attr("__arrow_c_stream__")();
  auto* c_stream =
      static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (c_stream == nullptr) throw nb::python_error();
  auto result = arrow::ImportRecordBatchReader(c_stream);
  if (!result.ok()) throw ConfigError(std::string(what) + ": " + result.status().ToString());
  return *std::move(result);
}

// The whole table an object with `__arrow_c_stream__` holds, read into memory.
inline std::shared_ptr<arrow::Table> ImportArrowTable(nb::handle obj, const char* what) {
  auto table = ImportArrowStream(obj, what)->ToTable();
  if (!table.ok()) throw ConfigError(std::string(what) + ": " + table.status().ToString());
  return *std::move(table);
}

}  // namespace mssql_cdc::python
