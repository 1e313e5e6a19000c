#include "source/odbc/bundled_driver.h"

#include <sys/utsname.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/options.h"

namespace mssql_cdc::odbc {
namespace {

std::mutex mutex;
std::optional<std::filesystem::path> libs;

// The words of an os-release key's value: ID_LIKE="rhel centos fedora" gives three.
std::vector<std::string> Words(std::string_view os_release, std::string_view key) {
  std::istringstream lines{std::string(os_release)};
  std::string line;
  const std::string prefix = std::string(key) + "=";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string value = line.substr(prefix.size());
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
      value = value.substr(1, value.size() - 2);
    }
    std::vector<std::string> words;
    std::istringstream split(AsciiLower(value));
    for (std::string word; split >> word;) words.push_back(word);
    return words;
  }
  return {};
}

}  // namespace

void UseBundledDriverLibs(std::filesystem::path libs_dir) {
  std::lock_guard lock(mutex);
  libs = std::move(libs_dir);
}

std::optional<std::string> DriverFamily(std::string_view os_release) {
  std::vector<std::string> names = Words(os_release, "ID");
  for (auto& like : Words(os_release, "ID_LIKE")) names.push_back(like);
  for (const std::string& name : names) {
    if (name == "debian" || name == "ubuntu") return "debian_ubuntu";
    if (name == "rhel" || name == "fedora" || name == "centos") return "rhel";
    if (name == "suse" || name == "sles" || name == "opensuse") return "suse";
  }
  return std::nullopt;
}

std::optional<std::string> FindDriver18(const std::filesystem::path& libs_dir,
                                        std::string_view family, std::string_view machine) {
  const std::string arch = machine == "aarch64" ? "arm64" : std::string(machine);
  const std::filesystem::path dir = libs_dir / "linux" / family / arch / "lib";
  std::error_code error;
  std::optional<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    // The newest when a folder ever holds two.
    if (name.rfind("libmsodbcsql-18", 0) == 0 && name.find(".so") != std::string::npos &&
        (!found || entry.path().string() > *found)) {
      found = entry.path().string();
    }
  }
  return found;
}

std::optional<std::string> BundledDriver18() {
  std::optional<std::filesystem::path> dir;
  {
    std::lock_guard lock(mutex);
    dir = libs;
  }
  if (!dir) return std::nullopt;
  std::ifstream file("/etc/os-release");
  std::stringstream text;
  text << file.rdbuf();
  const auto family = DriverFamily(text.str());
  if (!family) return std::nullopt;
  utsname host{};
  if (uname(&host) != 0) return std::nullopt;
  return FindDriver18(*dir, *family, host.machine);
}

}  // namespace mssql_cdc::odbc
