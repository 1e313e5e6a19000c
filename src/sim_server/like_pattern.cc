#include "sim_server/like_pattern.h"

#include <cctype>

namespace mssql_cdc::sim_server {
namespace {

char Fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The set at pattern[at] (after '['): whether `c` is in it; `end` is set after the ']'. False,
// end at npos, when the bracket is not closed (then '[' is an ordinary character).
bool InSet(std::string_view pattern, std::size_t at, char c, std::size_t* end) {
  bool negated = at < pattern.size() && pattern[at] == '^';
  if (negated) ++at;
  bool found = false;
  for (std::size_t i = at; i < pattern.size(); ++i) {
    if (pattern[i] == ']' && i > at) {
      *end = i + 1;
      return found != negated;
    }
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      found = found || (Fold(c) >= Fold(pattern[i]) && Fold(c) <= Fold(pattern[i + 2]));
      i += 2;
    } else {
      found = found || Fold(c) == Fold(pattern[i]);
    }
  }
  *end = std::string_view::npos;
  return false;
}

bool Match(std::string_view pattern, std::size_t p, std::string_view text, std::size_t t) {
  while (p < pattern.size()) {
    const char c = pattern[p];
    if (c == '%') {
      while (p < pattern.size() && pattern[p] == '%') ++p;
      if (p == pattern.size()) return true;
      for (std::size_t from = t; from <= text.size(); ++from) {
        if (Match(pattern, p, text, from)) return true;
      }
      return false;
    }
    if (t == text.size()) return false;
    if (c == '_') {
      ++p;
      ++t;
      continue;
    }
    if (c == '[') {
      std::size_t end = 0;
      const bool in = InSet(pattern, p + 1, text[t], &end);
      if (end != std::string_view::npos) {
        if (!in) return false;
        p = end;
        ++t;
        continue;
      }
    }
    if (Fold(c) != Fold(text[t])) return false;
    ++p;
    ++t;
  }
  return t == text.size();
}

}  // namespace

bool LikeMatches(std::string_view pattern, std::string_view text) { return Match(pattern, 0, text, 0); }

}  // namespace mssql_cdc::sim_server
