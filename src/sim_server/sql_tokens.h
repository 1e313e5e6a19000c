// Splits T-SQL text into tokens, so that statements can be recognised whatever their spacing,
// keyword case and quoting: words (keywords and plain names), [quoted names] with `]]` read as
// `]`, 'strings' and N'strings' with `''` read as `'`, numbers and 0x binary literals,
// parameter markers (`?` and `@P<n>`), and punctuation. Whitespace and comments separate
// tokens and are dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ascii.h"

namespace mssql_cdc::sim_server {

struct SqlToken {
  enum class Kind { kWord, kQuotedName, kString, kNumber, kBinary, kParameter, kPunct };
  Kind kind = Kind::kWord;
  // kWord, kNumber, kPunct: as written. kQuotedName, kString: the content, unescaped.
  // kBinary: the bytes. kParameter: "?" or the name as written ("@P2").
  std::string text;
  bool unicode = false;  // an N'...' string

  // Words and names, quoted or not, compare ignoring ASCII case, as SQL Server's default
  // collation compares identifiers.
  bool IsName() const { return kind == Kind::kWord || kind == Kind::kQuotedName; }
  bool IsName(std::string_view name) const;
  bool IsPunct(std::string_view punct) const { return kind == Kind::kPunct && text == punct; }
  // The 1-based number of an @P<n> marker; 0 for `?`.
  int ParameterNumber() const;
  // How SQL Server would quote the token in a message ("Incorrect syntax near 'x'.").
  std::string Display() const;
};

struct TokenizeResult {
  std::vector<SqlToken> tokens;
  // Set when a string or quoted name is not closed: its content so far (error 105).
  std::optional<std::string> unclosed;
};

TokenizeResult Tokenize(std::string_view sql);

// Case-insensitive ASCII comparison, as identifiers compare.
inline bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return EqualsIgnoringAsciiCase(a, b);
}

}  // namespace mssql_cdc::sim_server
