// The names closest to one a user gave that no name has: what a "did you mean" suggests after
// a misspelt option, key or time zone. Names are compared in ASCII lower case.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc {

// The Levenshtein distance: the fewest single-character insertions, deletions and substitutions
// that turn `a` into `b`.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The names of `known` within a few edits of `given` (at most 2, or a quarter of its length),
// closest first, at most `limit` of them.
std::vector<std::string> ClosestNames(std::string_view given, std::span<const std::string_view> known,
                                      std::size_t limit = 3);

// " (did you mean 'a' or 'b'?)" for the closest names, or "" when none is close.
std::string DidYouMean(std::string_view given, std::span<const std::string_view> known);

}  // namespace mssql_cdc
