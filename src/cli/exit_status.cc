#include "cli/exit_status.h"

#include <cmath>
#include <cstdlib>

#include "core/user_text.h"

namespace mssql_cdc::cli {

CLI::Validator PositiveNumber(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) ||
            value <= 0) {
          return "must be a number of " + what + " greater than 0, got " + QuoteUserText(text);
        }
        return {};
      },
      what);
}

}  // namespace mssql_cdc::cli
