// An ODBC connection string as a list of keyword=value pairs, read and written back by the
// rules of SQLDriverConnect: pairs separated by `;`, a value in braces may hold `;` and
// `{`, and `}}` inside braces stands for one `}`.
//
// Keywords compare ignoring ASCII case and keep the spelling and order they were given in.
// A connection string is a secret: no message made here quotes a value, only keywords.
//
// FreeTDS (1.3) reads braces its own way: a braced value ends at the `}` before the next `;`
// (or the end) and `}}` is not unescaped, so for it values are braced as they are, and one
// holding "};" cannot be written at all.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc::odbc {

enum class BraceStyle {
  kOdbc,     // `}` doubled inside braces, as the ODBC specification and Microsoft's drivers read
  kFreeTds,  // the value as it is inside braces
};

struct ConnectionKeyword {
  std::string name;
  std::string value;
};

class ConnectionString {
 public:
  ConnectionString() = default;

  // Throws ConfigError, naming the keyword but never a value, for a pair without `=`, an
  // empty keyword, an unclosed brace, text after a closing brace, or a keyword given twice.
  static ConnectionString Parse(std::string_view text);

  const std::vector<ConnectionKeyword>& keywords() const { return keywords_; }
  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  // Replaces the value of `name` (keeping its place and spelling) or appends the pair.
  void Set(std::string_view name, std::string value);
  void Remove(std::string_view name);

  // The text for SQLDriverConnect. Values that need it are written in braces; the login's
  // and the driver's always are. Throws ConfigError, naming the keyword, for a value FreeTDS
  // cannot read.
  std::string ToString(BraceStyle style = BraceStyle::kOdbc) const;

  // `value` as a connection string value: as is when it is safe bare, else braced.
  static std::string FormatValue(std::string_view name, std::string_view value,
                                 BraceStyle style = BraceStyle::kOdbc);

 private:
  const ConnectionKeyword* Find(std::string_view name) const;

  std::vector<ConnectionKeyword> keywords_;
};

bool SameKeyword(std::string_view a, std::string_view b);

}  // namespace mssql_cdc::odbc
