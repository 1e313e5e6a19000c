#include "source/name_match.h"

namespace mssql_cdc {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace mssql_cdc
