// The extension module mssql_cdc._core: the C++ engine as Python sees it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "core/lsn.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.attr("__version__") = "0.1.0";
}
