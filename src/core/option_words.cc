#include "core/option_words.h"

#include "core/ascii.h"

namespace mssql_cdc {

std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (auto name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::optional<bool> ParseBoolWord(std::string_view text) {
  std::string word = AsciiLower(TrimAsciiSpace(text));
  if (word == "true" || word == "1" || word == "yes" || word == "y") return true;
  if (word == "false" || word == "0" || word == "no" || word == "n") return false;
  return std::nullopt;
}

}  // namespace mssql_cdc
