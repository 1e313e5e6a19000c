// Microsoft ODBC Driver 18 as the PyPI package mssql-python-odbc ships it, which the wheel
// depends on: a `libs/` folder with one build per Linux family and architecture
// (`linux/debian_ubuntu/x86_64/lib/libmsodbcsql-18.6.so.2.1`, `linux/rhel/...`,
// `linux/suse/...`), each beside the libodbcinst it needs. Used by path, so no odbcinst.ini
// entry is needed.
//
// The Python package tells the engine where the folder is (UseBundledDriverLibs) when it
// loads; the engine picks the build for the machine it runs on by /etc/os-release.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace mssql_cdc::odbc {

// Process-wide: the `libs/` folder of mssql-python-odbc. Safe to call from any thread.
void UseBundledDriverLibs(std::filesystem::path libs_dir);

// The driver library for this machine from the folder UseBundledDriverLibs named; nullopt
// when none was named, the Linux family is not one the package builds for, or the file is
// missing.
std::optional<std::string> BundledDriver18();

// The folder's family for an /etc/os-release text: "debian_ubuntu", "rhel" or "suse" by ID
// and ID_LIKE; nullopt for any other (Alpine's musl, or an unknown family).
std::optional<std::string> DriverFamily(std::string_view os_release);

// The libmsodbcsql-18 library under `libs_dir` for a family and a machine (uname's
// x86_64 or aarch64), if there is one.
std::optional<std::string> FindDriver18(const std::filesystem::path& libs_dir,
                                        std::string_view family, std::string_view machine);

}  // namespace mssql_cdc::odbc
