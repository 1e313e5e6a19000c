// Raises engine errors in Python as the classes of mssql_cdc.errors, by class name.
#pragma once

#include <nanobind/nanobind.h>

namespace mssql_cdc::python {

void RegisterErrorTranslator();

}  // namespace mssql_cdc::python
