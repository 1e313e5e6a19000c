// Source options from a Python dict, for the bindings that take them: names as given
// (matched ignoring case by the parser), values as text; a bool becomes "true" or "false".
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/options.h"
#include "core/source_options.h"

namespace mssql_cdc::python {

inline SourceOptions ParseSourceOptionsFor(nanobind::handle mapping, SourceOptions::CaptureInstanceRule rule) {
  namespace nb = nanobind;
  if (!nb::isinstance<nb::dict>(mapping)) throw ConfigError("options must be a dict of str to str");
  std::vector<Options::Entry> entries;
  for (auto [key, value] : nb::borrow<nb::dict>(mapping)) {
    if (!nb::isinstance<nb::str>(key)) throw ConfigError("option names must be str");
    std::string text;
    if (nb::isinstance<nb::bool_>(value)) {
      text = nb::cast<bool>(value) ? "true" : "false";
    } else {
      text = nb::cast<std::string>(nb::str(value));
    }
    entries.emplace_back(nb::cast<std::string>(key), std::move(text));
  }
  return SourceOptions::Parse(Options(std::move(entries)), rule);
}

inline SourceOptions ParseSourceOptions(nanobind::handle mapping) {
  return ParseSourceOptionsFor(mapping, SourceOptions::CaptureInstanceRule::kRequired);
}

}  // namespace mssql_cdc::python
