#include "bindings/errors.h"

#include <string>

#include "core/errors.h"

namespace nb = nanobind;

namespace mssql_cdc::python {

void RegisterErrorTranslator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::object errors = nb::module_::import_("mssql_cdc.errors");
      nb::object cls = errors.attr(std::string(e.class_name()).c_str());
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
}

}  // namespace mssql_cdc::python
