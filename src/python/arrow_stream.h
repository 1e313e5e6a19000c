// Arrow across the Python border through the Arrow PyCapsule interface: record batches
// handed to pyarrow (`__arrow_c_stream__`, zero copy), and schemas and streams taken from any
// object that exports them (pyarrow.Schema, Table, RecordBatchReader, ...).
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

namespace mssql_cdc::python {

namespace nb = nanobind;

// An Arrow stream not yet handed to a consumer; `__arrow_c_stream__` gives it away once.
class ArrowStream {
 public:
  explicit ArrowStream(std::shared_ptr<arrow::RecordBatchReader> reader)
      : reader_(std::move(reader)) {}

  nb::object ExportCapsule(nb::object /*requested_schema*/) {
    if (!reader_) throw ConfigError("this Arrow stream was already consumed");
    auto* stream = new ArrowArrayStream();
    arrow::Status status = arrow::ExportRecordBatchReader(std::move(reader_), stream);
    if (!status.ok()) {
      delete stream;
      throw InternalError("exporting an Arrow stream: " + status.ToString());
    }
    PyObject* capsule = PyCapsule_New(stream, "arrow_array_stream", [](PyObject* cap) {
      auto* s = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(cap, "arrow_array_stream"));
      if (s->release != nullptr) s->release(s);
      delete s;
    });
    if (capsule == nullptr) throw nb::python_error();
    return nb::steal(capsule);
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
};

// Registers ArrowStream with the module once (source_bindings.cc does).
inline void BindArrowStream(nb::module_& m) {
  nb::class_<ArrowStream>(m, "ArrowStream",
                          "Record batches for pyarrow.RecordBatchReader.from_stream().")
      .def("__arrow_c_stream__", &ArrowStream::ExportCapsule,
           nb::arg("requested_schema") = nb::none());
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

}  // namespace mssql_cdc::python
