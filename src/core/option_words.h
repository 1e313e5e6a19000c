// Words the option parsers share (options.cc, source_options.cc, stream_params.cc): the
// booleans options accept, and lists of names in messages. Internal to core.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mssql_cdc {

// How a secret option's value is shown: never the value.
inline constexpr std::string_view kSecretShown = "***";

// "a, b, c".
std::string JoinNames(std::span<const std::string_view> names);

// The boolean words of docs/reference/options.md (true/1/yes/y, false/0/no/n), any case,
// spaces around ignored; nullopt for any other text.
std::optional<bool> ParseBoolWord(std::string_view text);

}  // namespace mssql_cdc
