#include "source/source.h"

#include <algorithm>
#include <cctype>

#include "core/errors.h"

namespace mssql_cdc {
namespace {

// SQL Server's default collations compare names ignoring case; ASCII folding is what the
// simulator's NOCASE columns do too.
bool EqualIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

std::string Source::HowToListCaptureInstances() const {
  return "list them with EXEC sys.sp_cdc_help_change_data_capture";
}

CaptureInstanceInfo Source::ResolveCaptureInstance(const std::string& name) {
  std::vector<CaptureInstanceInfo> instances = ListCaptureInstances();
  for (const auto& instance : instances) {
    if (instance.name == name) return instance;
  }
  std::vector<const CaptureInstanceInfo*> matches;
  for (const auto& instance : instances) {
    if (EqualIgnoringCase(instance.name, name)) matches.push_back(&instance);
  }
  if (matches.size() == 1) return *matches.front();
  if (matches.size() > 1) {
    std::vector<std::string> names;
    for (const auto* m : matches) names.push_back("'" + m->name + "'");
    throw ConfigError("capture instance '" + name + "' matches " + Joined(names) +
                      ", which differ only in case: give the name exactly");
  }
  std::vector<std::string> names;
  for (const auto& instance : instances) names.push_back(instance.name);
  std::sort(names.begin(), names.end());
  const std::string there =
      names.empty() ? "there are none (enable CDC on a table first)"
                    : "there are: " + Joined(names);
  throw NotFoundError("capture instance '" + name + "' does not exist; " + there + "; " +
                      HowToListCaptureInstances());
}

}  // namespace mssql_cdc
