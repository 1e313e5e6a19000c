// The mssql-cdc command line inside the extension, for the wheel's `mssql-cdc` console script
// (mssql_cdc/_command_line.py): one engine, one set of commands, whichever way it is started.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "cli/command_line.h"

namespace nb = nanobind;

namespace mssql_cdc::python {

void BindCommandLine(nb::module_& m) {
  m.def(
      "run_command_line",
      [](std::vector<std::string> args) {
        std::vector<char*> argv;
        for (std::string& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        // A run lasts as long as its streams; Python has nothing to do meanwhile.
        nb::gil_scoped_release release;
        return cli::RunCommandLine(static_cast<int>(args.size()), argv.data());
      },
      nb::arg("argv"),
      "Runs `mssql-cdc` with argv (argv[0] the program's name); returns its exit status.");
}

}  // namespace mssql_cdc::python
