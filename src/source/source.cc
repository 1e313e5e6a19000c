#include "source/source.h"

#include <algorithm>

#include "core/ascii.h"
#include "core/errors.h"
#include "source/name_match.h"

namespace mssql_cdc {

std::string Source::HowToListCaptureInstances() const {
  return "list them with EXEC sys.sp_cdc_help_change_data_capture";
}

std::vector<CaptureInstanceInfo> Source::ListTableInstances(const std::string& source_schema,
                                                            const std::string& source_table) {
  std::vector<CaptureInstanceInfo> out;
  for (auto& instance : ListCaptureInstances()) {
    if (EqualsIgnoringAsciiCase(instance.source_schema, source_schema) &&
        EqualsIgnoringAsciiCase(instance.source_table, source_table)) {
      out.push_back(std::move(instance));
    }
  }
  return out;
}

CaptureInstanceInfo Source::ResolveCaptureInstance(const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  if (listed_at_ && now - *listed_at_ < kInstanceListKept) {
    std::vector<std::string> kept;
    for (const auto& instance : listed_) kept.push_back(instance.name);
    const int found = FindName(kept, name);
    if (found >= 0) return listed_[found];
  }
  listed_ = ListCaptureInstances();
  listed_at_ = now;
  const std::vector<CaptureInstanceInfo>& instances = listed_;
  std::vector<std::string> names;
  for (const auto& instance : instances) names.push_back(instance.name);
  const int found = FindName(names, name);
  if (found >= 0) return instances[found];
  if (found == -2) {
    std::vector<std::string> matches;
    for (const auto& candidate : names) {
      if (EqualsIgnoringAsciiCase(candidate, name)) matches.push_back("'" + candidate + "'");
    }
    throw ConfigError("capture instance '" + name + "' matches " + JoinNames(matches) +
                      ", which differ only in case: give the name exactly");
  }
  // A default-named instance (<schema>_<table>) that was disabled still names its table: a
  // stream configured with it follows the table's newest instance.
  const CaptureInstanceInfo* newest = nullptr;
  for (const auto& instance : instances) {
    if (EqualsIgnoringAsciiCase(instance.source_schema + "_" + instance.source_table, name) &&
        !instance.start_lsn.IsZero() && (!newest || newest->start_lsn < instance.start_lsn)) {
      newest = &instance;
    }
  }
  if (newest) return *newest;
  std::sort(names.begin(), names.end());
  const std::string there =
      names.empty() ? "there are none (enable CDC on a table first)"
                    : "there are: " + JoinNames(names);
  throw NotFoundError("capture instance '" + name + "' does not exist; " + there + "; " +
                      HowToListCaptureInstances());
}

}  // namespace mssql_cdc
