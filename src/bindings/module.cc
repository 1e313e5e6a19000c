// The extension module mssql_cdc._core: the C++ engine as Python sees it. Python adapts the
// engine to Spark and nothing more, so these bindings expose engine calls as they are.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "core/ascii.h"
#include "core/errors.h"
#include "core/lsn.h"
#include "core/offset.h"
#include "core/options.h"
#include "core/sql_type.h"
#include "bindings/errors.h"
#include "storage/local_file_system.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
void BindSource(nb::module_& m);  // source_bindings.cc
void BindDelta(nb::module_& m);   // delta_bindings.cc
void BindFeed(nb::module_& m);    // feed_bindings.cc
void BindSnapshot(nb::module_& m);  // snapshot_bindings.cc
void BindBackfill(nb::module_& m);  // backfill_bindings.cc
void BindGenerations(nb::module_& m);  // generation_bindings.cc
void BindTables(nb::module_& m);  // table_bindings.cc
void BindFinalization(nb::module_& m);  // finalization_bindings.cc
void BindCatalog(nb::module_& m);  // catalog_bindings.cc
void BindSilver(nb::module_& m);   // silver_bindings.cc
void BindReconcile(nb::module_& m);  // reconcile_bindings.cc
void BindCommandLine(nb::module_& m);  // cli_bindings.cc
void BindSim(nb::module_& m);      // sim_bindings.cc
}

NB_MODULE(_core, m) {
  using namespace mssql_cdc;
  m.attr("__version__") = MSSQL_CDC_VERSION;
  python::RegisterErrorTranslator();
  m.def("error_codes", [] {
    std::vector<std::pair<std::string, int>> codes;
    for (ErrorCode code : kErrorCodes) {
      codes.emplace_back(std::string(ErrorClassName(code)), static_cast<int>(code));
    }
    return codes;
  }, "(class name, stable code) of every engine error, as core/errors.h defines them.");

  m.def("option_name_key", [](const std::string& name) { return AsciiLower(name); }, nb::arg("name"),
        "The key options are matched by: the name with A-Z lowered, nothing else folded "
        "(core/options.h, Options).");
  m.def("check_location", &storage::CheckSharedLocation, nb::arg("location"), nb::arg("what"),
        "ConfigError for a location Spark and the engine would read as two places: a relative "
        "path, or a file URI of another host (storage/local_file_system.h).");
  m.def("source_option_names", [] {
    return std::vector<std::string>(kSourceOptionNames.begin(), kSourceOptionNames.end());
  }, "Every source option the engine knows, as users write them.");
  m.def("source_option_spelling",
        [](const std::string& name) -> std::optional<std::string> {
          auto known = KnownSourceOptionSpelling(name);
          return known ? std::optional<std::string>(std::string(*known)) : std::nullopt;
        },
        nb::arg("name"),
        "The spelling of a known source option named in any case; None for an unknown name.");
  m.def("lsn_normalize", [](const std::string& text) { return Lsn::ParseLenient(text).ToString(); },
        "An LSN as 0x + 20 uppercase hex; accepts 1-20 hex digits with or without 0x.");
  m.def("lsn_increment", [](const std::string& text) { return Lsn::Parse(text).Increment().ToString(); },
        "sys.fn_cdc_increment_lsn");
  m.def("lsn_decrement", [](const std::string& text) { return Lsn::Parse(text).Decrement().ToString(); },
        "sys.fn_cdc_decrement_lsn");
  m.def("offset_normalize", [](const std::string& json) { return Offset::FromJson(json).ToJson(); },
        "Parses an offset JSON and writes it back in the contract's form.");
  m.def("spark_type", [](const std::string& declaration) {
    return SparkTypeFor(SqlType::Parse(declaration), "column");
  }, "The Spark SQL type of a SQL Server type declaration under the engine's mapping.");
  python::BindSource(m);
  python::BindCommandLine(m);
  python::BindDelta(m);
  python::BindFeed(m);
  python::BindSnapshot(m);
  python::BindBackfill(m);
  python::BindGenerations(m);
  python::BindTables(m);
  python::BindFinalization(m);
  python::BindCatalog(m);
  python::BindSilver(m);
  python::BindReconcile(m);
  python::BindSim(m);
}
